// Speculative re-run of a straggler chunk. A render in chunks is as slow as its slowest chunk: a
// worker that is alive (its lease is renewed) but slow or stuck (a hung encoder, a machine
// swapping) would hold the whole render. So once every other chunk of a render is done and the
// last one has run `speculativeFactor` x the median time of its siblings and at least
// `speculativeMinSeconds`, an idle worker queues a second copy of it (a chunk job with `copy`).
// The two race: the first to record the chunk wins (render-repository.ts completeChunk is guarded
// by the chunk's state), the other stops within a second (worker.ts's cancel check sees the chunk
// done) or, if it finishes anyway, records nothing and its objects are deleted. The join is queued
// once by the recording copy and the render charged once by the join, as without a copy.
// At most one copy per chunk (markSpeculative guards it); a chunk whose worker died is not
// speculated on: its lease runs out and the queue offers it again.
import type { ServiceContext } from "../context";
import { jobIdOf, type JobQueue } from "../queue/job-queue";
import { doneChunkDurations, loadStragglerCandidates, markSpeculative } from "./chunk-repository";

export interface SpeculationSettings {
  /** x the median chunk time; 0 turns speculation off. */
  factor: number;
  minSeconds: number;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Whether a chunk running for `runningMs` is a straggler next to its finished siblings. */
export function isStraggler(
  runningMs: number,
  siblingsMs: number[],
  settings: SpeculationSettings,
): boolean {
  if (settings.factor <= 0 || siblingsMs.length === 0) return false;
  return (
    runningMs >= settings.minSeconds * 1000 && runningMs > settings.factor * median(siblingsMs)
  );
}

/**
 * Queues a speculative copy of every straggler chunk (run by an idle worker). Returns how many were
 * queued.
 */
export async function startSpeculativeCopies(
  ctx: ServiceContext,
  queue: JobQueue,
): Promise<number> {
  const settings = {
    factor: ctx.config.speculativeFactor,
    minSeconds: ctx.config.speculativeMinSeconds,
  };
  if (settings.factor <= 0) return 0;
  const now = ctx.now();
  const candidates = await loadStragglerCandidates(ctx.db, now, now - settings.minSeconds * 1000);
  let started = 0;
  for (const candidate of candidates) {
    const runningMs = now - Number(candidate.started_ms);
    const siblingsMs = await doneChunkDurations(ctx.db, candidate.render_id);
    if (!isStraggler(runningMs, siblingsMs, settings)) continue;
    const queued = await ctx.db.transaction().execute(async (trx) => {
      if (!(await markSpeculative(trx, candidate.render_id, candidate.idx, now))) return false;
      const copy = { kind: "chunk", renderId: candidate.render_id, chunk: candidate.idx } as const;
      await queue.enqueue(trx, jobIdOf({ ...copy, copy: true }));
      return true;
    });
    if (!queued) continue;
    started++;
    ctx.metrics.speculativeChunks.inc({ outcome: "started" });
    ctx.log.info(
      {
        renderId: candidate.render_id,
        chunk: candidate.idx,
        runningMs,
        medianChunkMs: Math.round(median(siblingsMs)),
        heldBy: candidate.lease_owner,
      },
      "straggler chunk queued a second time (speculative copy)",
    );
  }
  return started;
}
