// Per-credential rate limit of /v3: @fastify/rate-limit (fixed windows of a minute,
// SVC_SERVER_RATE_LIMIT_PER_MINUTE requests each) with its counts in the service's database
// (the `rate_limits` table) instead of the process's memory, so every API process on one
// PostgreSQL counts the same requests: N processes behind a load balancer allow the limit once,
// not N times.
//
// A query per request made the limit most of a poll's cost, so each process counts locally and
// reconciles: a credential's requests are admitted here without a query while the shared count
// known from the last reconciliation plus what this process admitted since stays under half the
// limit, and added to the database in one upsert a second (RECONCILE_MS). Past half, every request
// is counted in the database as it arrives, so the request over the limit is refused whichever
// process answers. What this allows beyond the limit: only while a credential is under half of it
// on every process at once, at most what the other processes admitted in their last second.
import rateLimit, { type FastifyRateLimitStore } from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { sql } from "kysely";
import type { ServiceContext } from "../context";
import type { Database } from "../db/database";
import { ApiError } from "../errors";
import { principalOf } from "./request";

const WINDOW_MS = 60_000;
/** How often a process adds the requests it admitted on its own to the shared count. */
export const RECONCILE_MS = 1_000;

export interface WindowCount {
  /** Requests of the key in its current window, this one included. */
  current: number;
  /** Milliseconds left in the window. */
  ttl: number;
}

/** Adds `hits` requests of `key` to its current window; the count and ms left in the window. */
export async function countRequest(
  db: Database,
  key: string,
  windowMs: number,
  now: number,
  hits = 1,
): Promise<WindowCount> {
  const expired = sql<boolean>`rate_limits.window_end_ms <= ${now}`;
  const row = await db
    .insertInto("rate_limits")
    .values({ key, hits, window_end_ms: now + windowMs })
    .onConflict((conflict) =>
      conflict.column("key").doUpdateSet({
        hits: sql<number>`case when ${expired} then ${hits} else rate_limits.hits + ${hits} end`,
        window_end_ms: sql<number>`case when ${expired} then ${now + windowMs} else rate_limits.window_end_ms end`,
      }),
    )
    .returning(["hits", "window_end_ms"])
    .executeTakeFirstOrThrow();
  return { current: Number(row.hits), ttl: Math.max(0, Number(row.window_end_ms) - now) };
}

interface KeyState {
  windowEnd: number;
  /** The shared count as of the last reconciliation. */
  known: number;
  /** Requests admitted here since, not yet in the database. */
  pending: number;
}

/**
 * The shared count of each key, reconciled with the database: see the header. `count` answers
 * without a query on the fast path; `reconcile` adds what was admitted locally.
 */
export class SharedWindowCounter {
  private readonly keys = new Map<string, KeyState>();

  constructor(
    private readonly db: Database,
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Counts one request: synchronously when it can be admitted locally, else from the database. */
  count(key: string): WindowCount | Promise<WindowCount> {
    const now = this.now();
    const admitted = this.admitLocally(key, now);
    if (admitted) return admitted;
    const state = this.keys.get(key);
    // Requests admitted in a window that has ended belong to it, not to the new one.
    const carried = state && now < state.windowEnd ? state.pending : 0;
    if (state) state.pending = 0;
    return this.add(key, carried + 1, now);
  }

  /**
   * Counts one request when it can be admitted without the database (see the header); else
   * counts nothing and answers undefined.
   */
  admitLocally(key: string, now = this.now()): WindowCount | undefined {
    const state = this.keys.get(key);
    if (!state || now >= state.windowEnd || 2 * (state.known + state.pending + 1) > this.max) {
      return undefined;
    }
    state.pending++;
    return { current: state.known + state.pending, ttl: state.windowEnd - now };
  }

  /** Adds every key's locally admitted requests to the database; forgets keys whose window ended. */
  async reconcile(): Promise<void> {
    const now = this.now();
    const work: Promise<unknown>[] = [];
    for (const [key, state] of this.keys) {
      if (now >= state.windowEnd) {
        this.keys.delete(key);
      } else if (state.pending > 0) {
        const hits = state.pending;
        state.pending = 0;
        work.push(
          this.add(key, hits, now).catch((error: unknown) => {
            // Counted again next time: a reconciliation that failed loses no request.
            state.pending += hits;
            throw error;
          }),
        );
      }
    }
    const failed = (await Promise.allSettled(work)).find((result) => result.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }

  private async add(key: string, hits: number, now: number): Promise<WindowCount> {
    const result = await countRequest(this.db, key, this.windowMs, now, hits);
    const state = this.keys.get(key);
    const windowEnd = now + result.ttl;
    if (state) {
      state.known = result.current;
      state.windowEnd = windowEnd;
    } else {
      this.keys.set(key, { known: result.current, windowEnd, pending: 0 });
    }
    return result;
  }
}

/** @fastify/rate-limit's store interface over a SharedWindowCounter. */
function counterStore(counter: SharedWindowCounter) {
  return class CounterRateLimitStore implements FastifyRateLimitStore {
    constructor(
      _options?: unknown,
      private readonly prefix = "",
    ) {}

    incr(
      key: string,
      callback: (error: Error | null, result?: WindowCount) => void,
      _timeWindow: number,
    ): void {
      const counted = counter.count(this.prefix + key);
      if (!(counted instanceof Promise)) return callback(null, counted);
      counted.then(
        (result) => callback(null, result),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    }

    child(routeOptions: { method: string | string[]; url: string }): FastifyRateLimitStore {
      return new CounterRateLimitStore(
        undefined,
        `${String(routeOptions.method)}${routeOptions.url}-`,
      );
    }
  };
}

/**
 * A SharedWindowCounter of `max` per `windowMs` whose local counts are added to the database every
 * RECONCILE_MS while `scope` is open, and once more when it closes.
 */
export function reconciledCounter(
  scope: FastifyInstance,
  ctx: ServiceContext,
  max: number,
  windowMs: number,
): SharedWindowCounter {
  const counter = new SharedWindowCounter(ctx.db, max, windowMs, ctx.now);
  const timer = setInterval(() => {
    counter.reconcile().catch((error: unknown) => {
      ctx.log.warn({ err: error }, "the rate limit's counts could not be added to the database");
    });
  }, RECONCILE_MS);
  timer.unref();
  scope.addHook("onClose", async () => {
    clearInterval(timer);
    await counter.reconcile().catch(() => undefined);
  });
  return counter;
}

/**
 * Limits every request of the scope (after authentication) per credential; the counter and its
 * limit, for the poll lane, or undefined when the limit is off.
 */
export async function registerRateLimit(
  scope: FastifyInstance,
  ctx: ServiceContext,
): Promise<{ counter: SharedWindowCounter; max: number } | undefined> {
  const perMinute = ctx.config.rateLimitPerMinute;
  if (perMinute <= 0) return undefined;
  const counter = reconciledCounter(scope, ctx, perMinute, WINDOW_MS);
  await scope.register(rateLimit, {
    // After the scope's authentication hook, which sets the principal.
    hook: "onRequest",
    max: perMinute,
    timeWindow: WINDOW_MS,
    store: counterStore(counter),
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
  return { counter, max: perMinute };
}
