// Idempotency-Key with Stripe semantics (SPEC.md section 4): scoped per account + endpoint, kept
// 24 h; the same key with the same body replays the first response (status and body), with a
// different body it is 409 svc_idempotency_conflict. A key whose first request is still running
// is also a conflict. 5xx answers are not stored, so a retry after a crash can succeed.
// A handler that writes in a transaction records its answer in that same transaction (the
// `record` callback), so a crash can never leave the work done but the key unanswered — which,
// once the placeholder counted as abandoned, would let a retry do the work twice.
import { createHash } from "node:crypto";
import { IDEMPOTENCY_KEY_PATTERN } from "../../shared/limits";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Transaction } from "kysely";
import type { Principal } from "../auth/accounts";
import type { Database } from "../db/database";
import type { DB } from "../db/schema";
import { ApiError, errorBody } from "../errors";
import { principalOf } from "./request";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const ABANDONED_AFTER_MS = 2 * 60 * 1000;

export interface StoredResponse {
  status: number;
  body: unknown;
  replayed: boolean;
}

interface Outcome {
  status: number;
  body: unknown;
}

/** Stores the answer inside the handler's own transaction; call it at most once. */
export type RecordResponse = (trx: Transaction<DB>, outcome: Outcome) => Promise<void>;

/** The request's Idempotency-Key header, if any. */
export function idempotencyKeyOf(
  headers: Record<string, string | string[] | undefined>,
): string | undefined {
  const value = headers["idempotency-key"];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The preamble of every POST that creates something under an Idempotency-Key (assets, renders):
 * runs `create` for the request's account at most once per key (withIdempotency) and sends 201
 * `{data}`, first or replayed (`Idempotent-Replayed: true`). `create` may store its answer in its
 * own transaction with `record`.
 */
export async function createIdempotently<T>(
  db: Database,
  request: FastifyRequest,
  reply: FastifyReply,
  endpoint: string,
  create: (
    principal: Principal,
    record: (trx: Transaction<DB>, data: T) => Promise<void>,
  ) => Promise<T>,
): Promise<void> {
  const principal = principalOf(request);
  const result = await withIdempotency(
    db,
    {
      userId: principal.user.id,
      endpoint,
      key: idempotencyKeyOf(request.headers),
      body: request.body,
    },
    async (record) => ({
      status: 201,
      body: {
        data: await create(principal, (trx, data) => record(trx, { status: 201, body: { data } })),
      },
    }),
  );
  if (result.replayed) reply.header("Idempotent-Replayed", "true");
  await reply.code(result.status).send(result.body as never);
}

export function requestHash(body: unknown): string {
  return createHash("sha256").update(canonicalJson(body)).digest("hex");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * Runs `handler` at most once per (user, endpoint, key). Without a key it just runs it.
 * The handler returns the success status and body; ApiErrors (4xx) are stored and replayed too.
 */
export async function withIdempotency(
  db: Database,
  scope: { userId: string; endpoint: string; key: string | undefined; body: unknown },
  handler: (record: RecordResponse) => Promise<Outcome>,
  now: () => number = Date.now,
): Promise<StoredResponse> {
  if (scope.key === undefined)
    return { ...(await handler(async () => undefined)), replayed: false };
  if (!IDEMPOTENCY_KEY_PATTERN.test(scope.key)) {
    throw new ApiError(
      "invalid_parameter",
      "Idempotency-Key must be 1 to 255 characters from A-Z a-z 0-9 _ : . -",
      "Idempotency-Key",
    );
  }
  const hash = requestHash(scope.body);
  const where = { user_id: scope.userId, endpoint: scope.endpoint, key: scope.key };
  const existing = await db
    .selectFrom("idempotency_keys")
    .selectAll()
    .where("user_id", "=", where.user_id)
    .where("endpoint", "=", where.endpoint)
    .where("key", "=", where.key)
    .executeTakeFirst();
  // A placeholder that never got its answer (the process died mid-request) is abandoned.
  const abandoned =
    existing !== undefined &&
    existing.status_code === null &&
    existing.created_ms < now() - ABANDONED_AFTER_MS;
  if (existing && !abandoned && existing.created_ms > now() - IDEMPOTENCY_TTL_MS) {
    if (existing.request_hash !== hash) {
      throw new ApiError(
        "svc_idempotency_conflict",
        "this Idempotency-Key was already used with a different request body",
        "Idempotency-Key",
      );
    }
    if (existing.status_code === null || existing.response_json === null) {
      throw new ApiError(
        "svc_idempotency_conflict",
        "a request with this Idempotency-Key is still being processed; retry shortly",
        "Idempotency-Key",
      );
    }
    return {
      status: existing.status_code,
      body: JSON.parse(existing.response_json),
      replayed: true,
    };
  }
  if (existing) await forget(db, where);
  try {
    await db
      .insertInto("idempotency_keys")
      .values({
        ...where,
        request_hash: hash,
        status_code: null,
        response_json: null,
        created_ms: now(),
      })
      .execute();
  } catch {
    // Lost a race with a concurrent request carrying the same key.
    throw new ApiError(
      "svc_idempotency_conflict",
      "a request with this Idempotency-Key is in progress",
      "Idempotency-Key",
    );
  }
  const record: RecordResponse = (trx, answer) => store(trx, where, answer);
  let outcome: Outcome;
  try {
    outcome = await handler(record);
  } catch (error) {
    // The work committed with its answer; a later failure must not let a retry redo it.
    if (await answered(db, where)) throw error;
    if (error instanceof ApiError && error.status < 500) {
      outcome = { status: error.status, body: { error: errorBody(error) } };
      await store(db, where, outcome);
    } else {
      await forget(db, where);
    }
    throw error;
  }
  await store(db, where, outcome);
  return { ...outcome, replayed: false };
}

/** Drops a key's record, so the next request with it runs afresh. */
async function forget(
  db: Database,
  where: { user_id: string; endpoint: string; key: string },
): Promise<void> {
  await db
    .deleteFrom("idempotency_keys")
    .where("user_id", "=", where.user_id)
    .where("endpoint", "=", where.endpoint)
    .where("key", "=", where.key)
    .execute();
}

async function answered(
  db: Database,
  where: { user_id: string; endpoint: string; key: string },
): Promise<boolean> {
  const row = await db
    .selectFrom("idempotency_keys")
    .select("status_code")
    .where("user_id", "=", where.user_id)
    .where("endpoint", "=", where.endpoint)
    .where("key", "=", where.key)
    .executeTakeFirst();
  return row?.status_code !== undefined && row.status_code !== null;
}

async function store(
  db: Database | Transaction<DB>,
  where: { user_id: string; endpoint: string; key: string },
  outcome: Outcome,
): Promise<void> {
  await db
    .updateTable("idempotency_keys")
    .set({ status_code: outcome.status, response_json: JSON.stringify(outcome.body) })
    .where("user_id", "=", where.user_id)
    .where("endpoint", "=", where.endpoint)
    .where("key", "=", where.key)
    .execute();
}
