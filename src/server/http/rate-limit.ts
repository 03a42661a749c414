// Per-credential rate limit of /v3: @fastify/rate-limit (fixed windows of a minute,
// SVC_SERVER_RATE_LIMIT_PER_MINUTE requests each) with its counts in the service's database
// (the `rate_limits` table) instead of the process's memory, so every API process on one
// PostgreSQL counts the same requests: N processes behind a load balancer allow the limit once,
// not N times. One upsert per request; the database's row lock orders concurrent ones.
import rateLimit, { type FastifyRateLimitStore } from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { sql } from "kysely";
import type { ServiceContext } from "../context";
import type { Database } from "../db/database";
import { ApiError } from "../errors";
import { principalOf } from "./request";

const WINDOW_MS = 60_000;

/** Counts one request of `key` in its current window; the count and ms left in the window. */
export async function countRequest(
  db: Database,
  key: string,
  windowMs: number,
  now: number,
): Promise<{ current: number; ttl: number }> {
  const expired = sql<boolean>`rate_limits.window_end_ms <= ${now}`;
  const row = await db
    .insertInto("rate_limits")
    .values({ key, hits: 1, window_end_ms: now + windowMs })
    .onConflict((conflict) =>
      conflict.column("key").doUpdateSet({
        hits: sql<number>`case when ${expired} then 1 else rate_limits.hits + 1 end`,
        window_end_ms: sql<number>`case when ${expired} then ${now + windowMs} else rate_limits.window_end_ms end`,
      }),
    )
    .returning(["hits", "window_end_ms"])
    .executeTakeFirstOrThrow();
  return { current: Number(row.hits), ttl: Math.max(0, Number(row.window_end_ms) - now) };
}

/** @fastify/rate-limit's store interface over countRequest. */
function databaseStore(db: Database, now: () => number) {
  return class DatabaseRateLimitStore implements FastifyRateLimitStore {
    constructor(
      _options?: unknown,
      private readonly prefix = "",
    ) {}

    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
    ): void {
      countRequest(db, this.prefix + key, timeWindow, now()).then(
        (result) => callback(null, result),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    }

    child(routeOptions: { method: string | string[]; url: string }): FastifyRateLimitStore {
      return new DatabaseRateLimitStore(
        undefined,
        `${String(routeOptions.method)}${routeOptions.url}-`,
      );
    }
  };
}

/** Limits every request of the scope (after authentication) per credential. */
export async function registerRateLimit(scope: FastifyInstance, ctx: ServiceContext) {
  const perMinute = ctx.config.rateLimitPerMinute;
  if (perMinute <= 0) return;
  await scope.register(rateLimit, {
    // After the scope's authentication hook, which sets the principal.
    hook: "onRequest",
    max: perMinute,
    timeWindow: WINDOW_MS,
    store: databaseStore(ctx.db, ctx.now),
    keyGenerator: (request: FastifyRequest) => principalOf(request).credentialId,
    errorResponseBuilder: (_request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      return new ApiError(
        "rate_limit_exceeded",
        `too many requests; retry in ${seconds} s`,
        undefined,
        { "retry-after": String(seconds) },
      );
    },
  });
}
