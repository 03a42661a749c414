// Every query of the render_chunks table: the chunks of a distributed render, planned at submit,
// each claimed, progressing and completed by a worker (its completion counted on the render in
// the same transaction), a straggler's speculative copy (speculation.ts), and the join's read of
// every chunk's segments. A write that could race the other copy of a chunk or a late worker
// carries a state guard.
import { sql, type Kysely, type Transaction } from "kysely";
import type { Chunk } from "../../engine/contract";
import type { ResolvedLibrary } from "../../node/index";
import type { DB, RendersTable } from "../db/schema";
import { findingsUpdate } from "./page-findings";
import { writeProgress } from "./render-repository";

type Db = Kysely<DB>;

/** A render's planned chunks, queued, in its submit's transaction. */
export async function insertChunks(
  trx: Transaction<DB>,
  renderId: string,
  chunks: Chunk[],
): Promise<void> {
  await trx
    .insertInto("render_chunks")
    .values(
      chunks.map((chunk) => ({
        render_id: renderId,
        idx: chunk.index,
        first_segment: chunk.firstSegment,
        segment_count: chunk.segmentCount,
        first_frame: chunk.firstFrame,
        frame_count: chunk.frameCount,
        state: "queued" as const,
        frames_done: 0,
        attempts: 0,
        worker: null,
        segments_json: null,
        started_ms: null,
        completed_ms: null,
      })),
    )
    .execute();
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
      ...findingsUpdate(render, done),
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

/** The indexes of a render's chunks, in order (none for a render not planned in chunks). */
export async function chunkIndexes(trx: Transaction<DB>, renderId: string): Promise<number[]> {
  const rows = await trx
    .selectFrom("render_chunks")
    .select("idx")
    .where("render_id", "=", renderId)
    .orderBy("idx")
    .execute();
  return rows.map((row) => row.idx);
}
