// Every query of the render_outputs table: the rows of a render submitted with `outputs` (one per
// file), their progress and completion. Charging: each output's completion records its file; the
// output that completes the set completes the render, writes every output's charge line and
// charges their sum, in one transaction (the job's finish), so a render is charged once, all of
// it, or (failed, cancelled) not at all.
import { sql, type Kysely, type Transaction } from "kysely";
import { outputCredits } from "../../shared/credits";
import type { DB, RenderOutputsTable, RendersTable } from "../db/schema";
import { toMilli } from "./credits";
import { completeAndCharge } from "./render-repository";
import type { ResolvedLibrary } from "../../node/index";
import { findingsUpdate } from "./page-findings";

type Db = Kysely<DB>;

/** Creates a render's output rows in the caller's transaction (its submit). */
export async function insertOutputs(
  trx: Transaction<DB>,
  outputs: RenderOutputsTable[],
): Promise<void> {
  if (outputs.length > 0) await trx.insertInto("render_outputs").values(outputs).execute();
}

export function loadOutputs(db: Db, renderId: string): Promise<RenderOutputsTable[]> {
  return db
    .selectFrom("render_outputs")
    .selectAll()
    .where("render_id", "=", renderId)
    .orderBy("idx")
    .execute();
}

export function loadOutput(db: Db, renderId: string, index: number): Promise<RenderOutputsTable> {
  return db
    .selectFrom("render_outputs")
    .selectAll()
    .where("render_id", "=", renderId)
    .where("idx", "=", index)
    .executeTakeFirstOrThrow();
}

export async function markOutputRendering(
  db: Db,
  renderId: string,
  index: number,
  now: number,
): Promise<void> {
  await db
    .updateTable("render_outputs")
    .set({ status: "rendering", started_ms: now })
    .where("render_id", "=", renderId)
    .where("idx", "=", index)
    .where("status", "in", ["queued", "rendering"])
    .execute();
}

/**
 * A render's progress while one of its outputs renders: the outputs done plus this one's share,
 * over all of them. Only ever raised (outputs render side by side and report independently);
 * advisory, so a failed write is dropped.
 */
export function writeOutputProgress(db: Db, renderId: string, fraction: number): void {
  const share = Math.min(1, Math.max(0, fraction));
  // (outputs_done + share) / output_count, at most 0.99; CASE: SQLite's min() is PostgreSQL's least().
  const raw = sql<number>`((outputs_done + cast(${share} as real)) / output_count)`;
  const progress = sql<number>`(case when ${raw} > 0.99 then 0.99 else ${raw} end)`;
  void db
    .updateTable("renders")
    .set({ progress })
    .where("id", "=", renderId)
    .where("status", "=", "rendering")
    .where("output_count", ">", 0)
    .where("progress", "<", progress)
    .execute()
    .catch(() => undefined);
}

export interface OutputDone {
  fileKey: string;
  thumbnailKey: string | null;
  bytes: number;
  /** A video's duration; null for a still. */
  durationSeconds: number | null;
  warnings: string[];
  /** The CDN libraries the page used for this output. */
  libraries?: ResolvedLibrary[];
}

/**
 * Records one output as completed, in the caller's transaction (its job's finish). Returns what
 * happened: `undefined` when the render is no longer running or the output was already done (the
 * caller then deletes the files it stored), else the completed output row and, when this output
 * completed the set, the completed render (charged, with every output's charge line written).
 */
export async function completeOutput(
  trx: Transaction<DB>,
  render: RendersTable,
  index: number,
  done: OutputDone,
  now: number,
): Promise<{ output: RenderOutputsTable; completedRender: RendersTable | undefined } | undefined> {
  const output = await trx
    .updateTable("render_outputs")
    .set({
      status: "completed",
      file_key: done.fileKey,
      thumbnail_key: done.thumbnailKey,
      bytes: done.bytes,
      duration: done.durationSeconds,
      completed_ms: now,
    })
    .where("render_id", "=", render.id)
    .where("idx", "=", index)
    .where("status", "in", ["queued", "rendering"])
    .returningAll()
    .executeTakeFirst();
  if (!output) return undefined;
  // The row lock on the render orders concurrent outputs: exactly one sees the set complete.
  const counted = await trx
    .updateTable("renders")
    .set((eb) => ({
      outputs_done: eb("outputs_done", "+", 1),
      ...findingsUpdate(render, done),
    }))
    .where("id", "=", render.id)
    .where("status", "in", ["queued", "rendering"])
    .where("deleted_ms", "is", null)
    .returningAll()
    .executeTakeFirst();
  if (!counted) return undefined;
  if (counted.outputs_done < counted.output_count) {
    await trx
      .updateTable("renders")
      .set({ progress: Math.min(0.99, counted.outputs_done / counted.output_count) })
      .where("id", "=", render.id)
      .execute();
    return { output, completedRender: undefined };
  }
  return { output, completedRender: await completeRenderOfOutputs(trx, counted, now) };
}

/**
 * The last output is done: every output's charge line (creditsFor through outputCredits), the
 * render completed with their sum and outputs[0]'s file as its video, and the account charged.
 */
async function completeRenderOfOutputs(
  trx: Transaction<DB>,
  render: RendersTable,
  now: number,
): Promise<RendersTable | undefined> {
  const outputs = await loadOutputs(trx, render.id);
  const first = outputs[0]!;
  const duration = outputs.find((output) => output.duration !== null)?.duration ?? 0;
  let total = 0;
  for (const output of outputs) {
    const line = toMilli(outputCredits(output, output.duration ?? duration, render.fps));
    total += line;
    await trx
      .updateTable("render_outputs")
      .set({ credits_charged_milli: line })
      .where("render_id", "=", render.id)
      .where("idx", "=", output.idx)
      .execute();
  }
  return completeAndCharge(
    trx,
    render,
    total,
    {
      duration: first.duration ?? duration,
      video_key: first.file_key,
      thumbnail_key: first.thumbnail_key,
    },
    now,
  );
}

/** The rows forget their files (which the caller deleted). */
export async function forgetOutputFiles(db: Db, renderId: string): Promise<void> {
  await db
    .updateTable("render_outputs")
    .set({ file_key: null, thumbnail_key: null })
    .where("render_id", "=", renderId)
    .execute();
}
