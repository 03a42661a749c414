// Every query of the renders table (a distributed render's chunks are chunk-repository.ts's):
// submit, the account's reads, cancel and delete, admission of held renders, the worker's status,
// progress, completion with its credit charge and failure, and the counts the quote and the
// metrics read. Every write that could race another worker carries a status guard,
// so a second completion or a late progress write after the render ended changes nothing. Queue
// jobs and webhooks are the caller's; a function that must share a transaction takes it.
import { sql, type Kysely, type Transaction } from "kysely";
import { CANCELLED_FAILURE_CODE } from "../../shared/api";
import { chargeCredits } from "../auth/account-repository";
import { compiledOnce } from "../db/database";
import type { DB, RendersTable } from "../db/schema";
import { renderCostMilli } from "./credits";
import type { ResolvedLibrary } from "../../node/index";
import { findingsUpdate } from "./page-findings";

type Db = Kysely<DB>;

export function loadRender(db: Db, renderId: string): Promise<RendersTable | undefined> {
  return db.selectFrom("renders").selectAll().where("id", "=", renderId).executeTakeFirst();
}

/** The render is being worked on (a whole render's progress starts again from 0). */
export async function markRendering(
  db: Db,
  render: RendersTable,
  startedMs: number,
  resetProgress: boolean,
): Promise<void> {
  await db
    .updateTable("renders")
    .set({ status: "rendering", started_ms: startedMs, ...(resetProgress ? { progress: 0 } : {}) })
    .where("id", "=", render.id)
    .where("status", "in", ["queued", "rendering"])
    .execute();
}

/** A whole render given back to the queue (worker shutdown): queued again, from 0. */
export async function requeueRender(db: Db, renderId: string): Promise<void> {
  await db
    .updateTable("renders")
    .set({ status: "queued", progress: 0 })
    .where("id", "=", renderId)
    .where("status", "=", "rendering")
    .execute();
}

/** Fails a render that is still running; the failed row, or undefined if it had already ended. */
export function failRender(
  trx: Transaction<DB>,
  renderId: string,
  failure: { code: string; message: string },
  now: number,
): Promise<RendersTable | undefined> {
  return trx
    .updateTable("renders")
    .set({
      status: "failed",
      failure_code: failure.code,
      failure_message: failure.message.slice(0, 2000),
      completed_ms: now,
    })
    .where("id", "=", renderId)
    .where("status", "in", ["queued", "rendering"])
    .returningAll()
    .executeTakeFirst();
}

/**
 * Completes the render and charges for it, once: the status guard makes a second call a no-op
 * (undefined). Returns the completed row.
 */
export async function completeRender(
  trx: Transaction<DB>,
  render: RendersTable,
  output: {
    videoKey: string;
    thumbnailKey: string | null;
    durationSeconds: number;
    /** The engine's warnings about the page (a whole render's; a chunked one's came with chunk 0). */
    warnings?: string[];
    /** The CDN libraries the page used (a whole render's; a chunked one's came with chunk 0). */
    libraries?: ResolvedLibrary[];
  },
  now: number,
): Promise<RendersTable | undefined> {
  return completeAndCharge(
    trx,
    render,
    renderCostMilli(output.durationSeconds, render.resolution),
    {
      duration: output.durationSeconds,
      video_key: output.videoKey,
      thumbnail_key: output.thumbnailKey,
      ...findingsUpdate(render, output),
    },
    now,
  );
}

/**
 * The one completion and charge, of a whole render and of one with several outputs
 * (render-outputs.ts): the render turns completed with `fields` and `costMilli` charged, and the
 * account pays it. Only from queued or rendering, so a second call is a no-op (undefined).
 */
export async function completeAndCharge(
  trx: Transaction<DB>,
  render: RendersTable,
  costMilli: number,
  fields: Pick<RendersTable, "duration" | "video_key" | "thumbnail_key"> &
    Partial<Pick<RendersTable, "warnings_json" | "libraries_json">>,
  now: number,
): Promise<RendersTable | undefined> {
  const completed = await trx
    .updateTable("renders")
    .set({
      status: "completed",
      progress: 1,
      credits_charged_milli: costMilli,
      completed_ms: now,
      ...fields,
    })
    .where("id", "=", render.id)
    // Not "!= completed": a render cancelled (failed) meanwhile must stay uncharged.
    .where("status", "in", ["queued", "rendering"])
    .where("deleted_ms", "is", null)
    .returningAll()
    .executeTakeFirst();
  if (!completed) return undefined;
  await chargeCredits(trx, completed.user_id, costMilli);
  return completed;
}

/** Progress of a render being worked on; advisory, so a failed write is dropped. */
export function writeProgress(db: Db, renderId: string, fraction: number): void {
  void db
    .updateTable("renders")
    .set({ progress: fraction })
    .where("id", "=", renderId)
    .where("status", "=", "rendering")
    .execute()
    .catch(() => undefined);
}

/**
 * What a running job's cancel check reads (worker.ts): its render's status and deletion, and the
 * state of the render_chunks row `chunkIndex` (-1: none) when the job renders a chunk.
 */
export function loadRunState(
  db: Db,
  renderId: string,
  chunkIndex: number,
): Promise<{ status: string; deleted_ms: number | null; chunkState: string | null } | undefined> {
  return db
    .selectFrom("renders")
    .leftJoin("render_chunks", (join) =>
      join
        .onRef("render_chunks.render_id", "=", "renders.id")
        .on("render_chunks.idx", "=", chunkIndex),
    )
    .select(["renders.status", "renders.deleted_ms", "render_chunks.state as chunkState"])
    .where("renders.id", "=", renderId)
    .executeTakeFirst();
}

/** Creates a render's row, queued, in the caller's transaction (its submit). */
export async function insertRender(trx: Transaction<DB>, row: RendersTable): Promise<void> {
  await trx.insertInto("renders").values(row).execute();
}

/**
 * A user's render that is not deleted: the hottest read of the service (every poll), compiled
 * once per database so a poll skips Kysely's per-call query building (the poll lane runs its SQL
 * on a connection of its own, render/poll-answers.ts).
 */
export const selectRender = compiledOnce((db, renderId: string, userId: string) =>
  db
    .selectFrom("renders")
    .selectAll()
    .where("id", "=", renderId)
    .where("user_id", "=", userId)
    .where("deleted_ms", "is", null),
);

/**
 * A page of an account's renders, newest first (created_ms, then id), after the keyset `after`
 * when given; `limit` rows at most.
 */
export function loadAccountRenders(
  db: Db,
  userId: string,
  limit: number,
  after: { createdMs: number; id: string } | undefined,
): Promise<RendersTable[]> {
  let select = db
    .selectFrom("renders")
    .selectAll()
    .where("user_id", "=", userId)
    .where("deleted_ms", "is", null);
  if (after) {
    select = select.where((eb) =>
      eb.or([
        eb("created_ms", "<", after.createdMs),
        eb.and([eb("created_ms", "=", after.createdMs), eb("id", "<", after.id)]),
      ]),
    );
  }
  return select.orderBy("created_ms", "desc").orderBy("id", "desc").limit(limit).execute();
}

/**
 * Fails a running render as cancelled, in the caller's transaction; the cancelled row, or
 * undefined when it had already ended or was deleted.
 */
export function markCancelled(
  trx: Transaction<DB>,
  renderId: string,
  now: number,
): Promise<RendersTable | undefined> {
  return trx
    .updateTable("renders")
    .set({
      status: "failed",
      failure_code: CANCELLED_FAILURE_CODE,
      failure_message: "the render was cancelled; nothing was charged",
      completed_ms: now,
    })
    .where("id", "=", renderId)
    .where("status", "in", ["queued", "rendering"])
    .where("deleted_ms", "is", null)
    .returningAll()
    .executeTakeFirst();
}

/** Soft delete: the record is hidden from its account from now on. */
export async function markDeleted(
  trx: Transaction<DB>,
  renderId: string,
  now: number,
): Promise<void> {
  await trx.updateTable("renders").set({ deleted_ms: now }).where("id", "=", renderId).execute();
}

/** Renders of the account queued for a worker or rendering (held ones not counted). */
export async function rendersInProgress(trx: Transaction<DB>, userId: string): Promise<number> {
  const row = await trx
    .selectFrom("renders")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("user_id", "=", userId)
    .where("status", "in", ["queued", "rendering"])
    .where("held", "=", 0)
    .where("deleted_ms", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The accounts that have held renders (admission.ts). */
export async function accountsWithHeldRenders(db: Db): Promise<string[]> {
  const rows = await db
    .selectFrom("renders")
    .select("user_id")
    .distinct()
    .where("held", "=", 1)
    .where("deleted_ms", "is", null)
    .execute();
  return rows.map((row) => row.user_id);
}

/** An account's oldest held renders, `limit` at most, in the order they are admitted. */
export function loadHeldRenders(trx: Transaction<DB>, userId: string, limit: number) {
  return trx
    .selectFrom("renders")
    .select(["id", "output_count"])
    .where("user_id", "=", userId)
    .where("held", "=", 1)
    .where("status", "=", "queued")
    .where("deleted_ms", "is", null)
    .orderBy("created_ms")
    .orderBy("id")
    .limit(limit)
    .execute();
}

/** A held render admitted: no longer held (its jobs are the caller's to queue). */
export async function markAdmitted(trx: Transaction<DB>, renderId: string): Promise<void> {
  await trx.updateTable("renders").set({ held: 0 }).where("id", "=", renderId).execute();
}

/** How many renders are queued and rendering now, across every account (quote.ts). */
export async function countRunningRenders(db: Db): Promise<{ queued: number; rendering: number }> {
  const counts = await db
    .selectFrom("renders")
    .select(["status", (eb) => eb.fn.countAll<number>().as("count")])
    .where("status", "in", ["queued", "rendering"])
    .where("deleted_ms", "is", null)
    .groupBy("status")
    .execute();
  const count = (status: string) => Number(counts.find((row) => row.status === status)?.count ?? 0);
  return { queued: count("queued"), rendering: count("rendering") };
}

/** The last `limit` completed renders' timing, newest first (quote.ts). */
export function loadRecentlyCompleted(db: Db, limit: number) {
  return db
    .selectFrom("renders")
    .select(["started_ms", "completed_ms", "duration", "fps"])
    .where("status", "=", "completed")
    .where("started_ms", "is not", null)
    .orderBy("completed_ms", "desc")
    .limit(limit)
    .execute();
}

/** The id of the HTTP request that submitted a render (on its webhook's log lines). */
export async function submittingRequestId(db: Db, renderId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("renders")
    .select("request_id")
    .where("id", "=", renderId)
    .executeTakeFirst();
  return row?.request_id ?? undefined;
}

/** The renders of every account counted for the Prometheus metrics (metrics.ts). */
export interface RenderCounts {
  byStatus: { status: string; count: number }[];
  failures: { code: string; count: number }[];
  queued: number;
  held: number;
  oldestQueuedMs: number | undefined;
  creditsCharged: number;
}

export async function countRenders(db: Db): Promise<RenderCounts> {
  const live = db.selectFrom("renders").where("deleted_ms", "is", null);
  const [byStatus, failures, waiting, charged] = await Promise.all([
    live
      .select(["status", (eb) => eb.fn.countAll<number>().as("count")])
      .groupBy("status")
      .execute(),
    live
      .where("status", "=", "failed")
      .select([
        sql<string>`coalesce(failure_code, 'unknown')`.as("code"),
        (eb) => eb.fn.countAll<number>().as("count"),
      ])
      .groupBy("failure_code")
      .execute(),
    live
      .where("status", "=", "queued")
      .select([
        "held",
        (eb) => eb.fn.countAll<number>().as("count"),
        (eb) => eb.fn.min<number>("created_ms").as("oldest"),
      ])
      .groupBy("held")
      .execute(),
    db
      .selectFrom("renders")
      .select((eb) => eb.fn.sum<number>("credits_charged_milli").as("milli"))
      .executeTakeFirst(),
  ]);
  const ready = waiting.find((row) => Number(row.held) === 0);
  const held = waiting.find((row) => Number(row.held) === 1);
  return {
    byStatus: byStatus.map((row) => ({ status: row.status, count: Number(row.count) })),
    failures: failures.map((row) => ({ code: row.code, count: Number(row.count) })),
    queued: Number(ready?.count ?? 0),
    held: Number(held?.count ?? 0),
    oldestQueuedMs: ready?.oldest == null ? undefined : Number(ready.oldest),
    creditsCharged: Number(charged?.milli ?? 0) / 1000,
  };
}
