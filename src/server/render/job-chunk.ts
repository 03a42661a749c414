// One chunk of a distributed render: a run of segments rendered by the engine and stored in the
// object store. The chunk that starts the video records the audio, the one holding the thumbnail
// frame cuts the thumbnail, and the chunk that completes the set queues the join (one atomic
// counter, render-repository.ts completeChunk). A straggler's speculative copy (`copy`,
// speculation.ts) runs the same way under its own job and object keys; whichever copy records the
// chunk first wins, and the other's segments are removed (the worker deletes what an attempt
// stored when it does not return "finished").
import { mkdir } from "node:fs/promises";
import { basename, join } from "node:path";
import { jobIdOf } from "../queue/job-queue";
import {
  mark,
  attemptProgress,
  renderOptions,
  renderPrefix,
  storeFile,
  toProjectRelative,
  unpackProject,
  finishedIf,
  type Attempt,
  type JobResult,
  type JobServices,
} from "./attempt";
import {
  completeChunk,
  loadChunk,
  type ChunkCompletion,
  markChunkRendering,
  writeChunkProgress,
} from "./chunk-repository";

export async function runChunkJob(
  services: JobServices,
  attempt: Attempt,
  index: number,
  copy: boolean,
): Promise<JobResult> {
  const { ctx, queue, engine } = services;
  const { render, lease } = attempt;
  const chunk = await loadChunk(ctx.db, render.id, index);
  if (chunk.state === "done") {
    // The other copy finished it (this one was queued, or its worker presumed dead, meanwhile).
    await queue.finish(lease, "done", async () => {});
    return "superseded";
  }
  // A copy leaves the chunk's attempts and start time to its first run (what speculation measures).
  if (!copy) await markChunkRendering(ctx.db, render.id, index, lease.attempt, ctx.now());
  const projectDir = await unpackProject(services, attempt);
  mark(attempt, "downloaded");
  const outputDir = join(attempt.workDir, "out");
  await mkdir(outputDir, { recursive: true });
  const result = await engine.renderChunk({
    ...renderOptions(services, attempt, projectDir),
    chunk: {
      index,
      firstSegment: chunk.first_segment,
      segmentCount: chunk.segment_count,
      firstFrame: chunk.first_frame,
      frameCount: chunk.frame_count,
    },
    frames: render.frames!,
    outputDir,
    // The page stays open for this render's next chunk on this worker (chunks go out in order).
    warm: true,
    onProgress: attemptProgress(attempt, (progress) => {
      void writeChunkProgress(ctx.db, render, index, progress.framesDone);
    }),
  });
  if (attempt.signal.aborted) throw attempt.signal.reason;
  mark(attempt, "rendered");
  attempt.details.catchUp = result.catchUp;
  attempt.details.warmPage = result.warmPage;
  if (result.catchUp.mode === "step") {
    attempt.log.warn(
      { warnings: result.warnings },
      "chunk page could not jump to its first frame; it was stepped through every earlier frame",
    );
  }
  // Its own keys: both copies of a chunk run as attempt 1, and the loser's objects are deleted.
  const prefix = `${renderPrefix(attempt)}/chunks/${index}-${copy ? "copy-" : ""}${lease.attempt}`;
  const segmentKeys: string[] = [];
  for (const file of result.segmentFiles) {
    segmentKeys.push(await storeFile(services, attempt, `${prefix}/${basename(file)}`, file));
  }
  const thumbnailKey = result.thumbnailPath
    ? await storeFile(services, attempt, `${prefix}/thumbnail.jpg`, result.thumbnailPath)
    : undefined;
  mark(attempt, "stored");
  const audioJson =
    index === 0
      ? JSON.stringify(result.audio.map((input) => toProjectRelative(input, projectDir)))
      : undefined;
  let outcome = "render-ended" as ChunkCompletion;
  const finished = await queue.finish(lease, "done", async (trx) => {
    const completed = await completeChunk(trx, render, index, {
      frameCount: chunk.frame_count,
      worker: ctx.config.workerName,
      segmentKeys,
      audioJson,
      thumbnailKey,
      ...(index === 0 ? { warnings: result.warnings } : {}),
      ...(index === 0 && result.libraries ? { libraries: result.libraries } : {}),
      copy,
      now: ctx.now(),
    });
    outcome = completed;
    if (completed === "completes-set") {
      await queue.enqueue(trx, jobIdOf({ kind: "join", renderId: render.id }));
    }
  });
  // Finished second (or after the render ended): the job is over, and what it stored is
  // referenced nowhere, so the worker deletes it.
  if (outcome === "already-done") return "superseded";
  return finishedIf(finished && (outcome === "completes-set" || outcome === "recorded"));
}
