// The render worker's SQL on render records: the renders row (status, progress, completion with
// its credit charge, failure) and the render_chunks rows of a distributed render. Every write that
// could race another worker carries a status guard, so a second completion or a late progress
// write after the render ended changes nothing. Queue jobs and webhooks are the caller's.
import { sql, type Kysely, type Transaction } from "kysely";
import type { DB, RendersTable } from "../db/schema";
import { renderCostMilli } from "./credits";
import type { ResolvedLibrary } from "../../node/index";
import { withCompositionWarnings, withLibraries } from "./render-record";

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

export async function assetStorageKey(db: Db, assetId: string): Promise<string | undefined> {
  const asset = await db
    .selectFrom("assets")
    .select("storage_key")
    .where("id", "=", assetId)
    .executeTakeFirst();
  return asset?.storage_key ?? undefined;
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
      ...(output.warnings?.length
        ? { warnings_json: withCompositionWarnings(render.warnings_json, output.warnings) }
        : {}),
      ...(output.libraries?.length
        ? { libraries_json: withLibraries(render.libraries_json, output.libraries) }
        : {}),
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
  await trx
    .updateTable("users")
    .set((eb) => ({
      credits_remaining_milli: eb("credits_remaining_milli", "-", costMilli),
      credits_used_milli: eb("credits_used_milli", "+", costMilli),
    }))
    .where("id", "=", completed.user_id)
    .execute();
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

export function loadChunk(db: Db, renderId: string, index: number) {
  return db
    .selectFrom("render_chunks")
    .selectAll()
    .where("render_id", "=", renderId)
    .where("idx", "=", index)
    .executeTakeFirstOrThrow();
}

export async function chunkIsDone(db: Db, renderId: string, index: number): Promise<boolean> {
  const row = await db
    .selectFrom("render_chunks")
    .select("state")
    .where("render_id", "=", renderId)
    .where("idx", "=", index)
    .executeTakeFirst();
  return row?.state === "done";
}

export async function markChunkRendering(
  db: Db,
  renderId: string,
  index: number,
  attempt: number,
  now: number,
): Promise<void> {
  await db
    .updateTable("render_chunks")
    .set({ state: "rendering", attempts: attempt, started_ms: now })
    .where("render_id", "=", renderId)
    .where("idx", "=", index)
    .where("state", "!=", "done")
    .execute();
}

/** A render in chunks progresses by the frames of all its chunks together. */
export async function writeChunkProgress(
  db: Db,
  render: RendersTable,
  index: number,
  framesDone: number,
): Promise<void> {
  try {
    await db
      .updateTable("render_chunks")
      .set({ frames_done: framesDone })
      .where("render_id", "=", render.id)
      .where("idx", "=", index)
      .where("state", "=", "rendering")
      .execute();
    const sum = await db
      .selectFrom("render_chunks")
      .select((eb) => eb.fn.sum<number>("frames_done").as("frames"))
      .where("render_id", "=", render.id)
      .executeTakeFirst();
    writeProgress(db, render.id, Math.min(0.99, Number(sum?.frames ?? 0) / render.frames!));
  } catch {
    // Progress is advisory; the next update will try again.
  }
}

export type ChunkCompletion = "completes-set" | "recorded" | "already-done" | "render-ended";

/**
 * Records a chunk as done and counts it on the render, in the caller's transaction:
 * "completes-set" for the one chunk that completed the set (the row lock orders concurrent
 * chunks), "recorded" for the others, "already-done" when the other copy of a speculative pair
 * finished it first (this one's segments are referenced nowhere), "render-ended" when the render
 * is no longer running.
 */
export async function completeChunk(
  trx: Transaction<DB>,
  render: RendersTable,
  index: number,
  done: {
    frameCount: number;
    worker: string;
    segmentKeys: string[];
    audioJson: string | undefined;
    thumbnailKey: string | undefined;
    /** Chunk 0's engine warnings about the page (every chunk loads the same page). */
    warnings?: string[];
    /** Chunk 0's CDN libraries (every chunk loads the same page). */
    libraries?: ResolvedLibrary[];
    /** The speculative copy of the chunk finished it (render/speculation.ts). */
    copy: boolean;
    now: number;
  },
): Promise<ChunkCompletion> {
  const updated = await trx
    .updateTable("render_chunks")
    .set({
      state: "done",
      frames_done: done.frameCount,
      worker: done.worker,
      segments_json: JSON.stringify(done.segmentKeys),
      completed_ms: done.now,
      copy_won: done.copy ? 1 : 0,
    })
    .where("render_id", "=", render.id)
    .where("idx", "=", index)
    .where("state", "!=", "done")
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) return "already-done";
  const counted = await trx
    .updateTable("renders")
    .set((eb) => ({
      chunks_done: eb("chunks_done", "+", 1),
      ...(done.audioJson !== undefined ? { audio_json: done.audioJson } : {}),
      ...(done.thumbnailKey ? { thumbnail_key: done.thumbnailKey } : {}),
      ...(done.warnings?.length
        ? { warnings_json: withCompositionWarnings(render.warnings_json, done.warnings) }
        : {}),
      ...(done.libraries?.length
        ? { libraries_json: withLibraries(render.libraries_json, done.libraries) }
        : {}),
    }))
    .where("id", "=", render.id)
    .where("status", "in", ["queued", "rendering"])
    .where("deleted_ms", "is", null)
    .returning(["chunks_done", "chunk_count"])
    .executeTakeFirst();
  if (!counted) return "render-ended";
  return counted.chunks_done === counted.chunk_count ? "completes-set" : "recorded";
}

/**
 * Chunks that may deserve a speculative copy (render/speculation.ts decides): the last chunk still
 * rendering of a running render, started before `startedBeforeMs`, with no copy yet, whose job is
 * held by a live lease (a dead worker's chunk is the lease's business: it is offered again).
 */
export function loadStragglerCandidates(db: Db, now: number, startedBeforeMs: number) {
  return db
    .selectFrom("render_chunks as c")
    .innerJoin("renders as r", "r.id", "c.render_id")
    .innerJoin("jobs as j", (join) =>
      join.on("j.id", "=", sql<string>`c.render_id || ':chunk:' || c.idx`),
    )
    .select(["c.render_id", "c.idx", "c.started_ms", "j.lease_owner"])
    .where("r.status", "=", "rendering")
    .where("r.deleted_ms", "is", null)
    .where("r.chunk_count", ">", 1)
    .where((eb) => eb("r.chunks_done", "=", eb("r.chunk_count", "-", 1)))
    .where("c.state", "=", "rendering")
    .where("c.speculative_ms", "is", null)
    .where("c.started_ms", "<", startedBeforeMs)
    .where("j.state", "=", "active")
    .where("j.lease_expires_ms", ">", now)
    .limit(20)
    .execute();
}

/** How long each finished chunk of a render took, first claim to completion (ms). */
export async function doneChunkDurations(db: Db, renderId: string): Promise<number[]> {
  const rows = await db
    .selectFrom("render_chunks")
    .select(["started_ms", "completed_ms"])
    .where("render_id", "=", renderId)
    .where("state", "=", "done")
    .execute();
  return rows.flatMap((row) =>
    row.started_ms !== null && row.completed_ms !== null
      ? [Number(row.completed_ms) - Number(row.started_ms)]
      : [],
  );
}

/**
 * Marks that a chunk's speculative copy is queued, in the caller's transaction; false when one
 * already was or the chunk is no longer rendering (at most one copy per chunk).
 */
export async function markSpeculative(
  trx: Transaction<DB>,
  renderId: string,
  index: number,
  now: number,
): Promise<boolean> {
  const updated = await trx
    .updateTable("render_chunks")
    .set({ speculative_ms: now })
    .where("render_id", "=", renderId)
    .where("idx", "=", index)
    .where("state", "=", "rendering")
    .where("speculative_ms", "is", null)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/** A render's speculative copies: how many chunks got one, and in how many the copy won. */
export async function speculativeCounts(
  db: Db,
  renderId: string,
): Promise<{ started: number; won: number }> {
  const rows = await db
    .selectFrom("render_chunks")
    .select(["copy_won"])
    .where("render_id", "=", renderId)
    .where("speculative_ms", "is not", null)
    .execute();
  return { started: rows.length, won: rows.filter((row) => row.copy_won === 1).length };
}

/** Every chunk of a render with its stored segments, in order. */
export function loadChunksForJoin(db: Db, renderId: string) {
  return db
    .selectFrom("render_chunks")
    .select(["idx", "segments_json", "state"])
    .where("render_id", "=", renderId)
    .orderBy("idx")
    .execute();
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
