// The join of a distributed render: the chunks' segments joined without re-encoding and the audio
// mixed once, then the render completed and charged in the transaction that finishes the job. The
// segments are deleted only after the render is completed. A failed join is offered again by the
// worker (worker.ts) until its attempts run out.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { AudioInput, RenderCaptions } from "../../engine/index";
import { FILE_EXTENSIONS, type OutputFormat, type Quality } from "../../shared/render-options";
import { enqueueWebhook } from "../webhooks/webhooks";
import {
  fromProjectRelative,
  mark,
  renderPrefix,
  storeFile,
  unpackProject,
  finishedIf,
  type Attempt,
  type JobResult,
  type JobServices,
} from "./attempt";
import { completeRender } from "./render-repository";
import { loadChunksForJoin, speculativeCounts } from "./chunk-repository";

/** Segments the join downloads at once. */
const JOIN_DOWNLOADS = 8;

export async function runJoinJob(services: JobServices, attempt: Attempt): Promise<JobResult> {
  const { ctx, queue, engine } = services;
  const { render, lease } = attempt;
  const chunks = await loadChunksForJoin(ctx.db, render.id);
  if (chunks.length !== render.chunk_count || chunks.some((chunk) => chunk.state !== "done")) {
    throw new Error(`render ${render.id} is not ready to join`);
  }
  const segmentsDir = join(attempt.workDir, "segments");
  await mkdir(segmentsDir, { recursive: true });
  const keys = chunks.flatMap((chunk) => JSON.parse(chunk.segments_json!) as string[]);
  const segmentFiles: string[] = new Array<string>(keys.length);
  const releases: (() => Promise<void>)[] = [];
  try {
    // Several at a time: one after the other, 200 small segments took 8-14 s, mostly round trips.
    let next = 0;
    const download = async () => {
      for (let i = next++; i < keys.length; i = next++) {
        const local = await ctx.store.toLocalFile(keys[i]!).catch((error: unknown) => {
          next = keys.length; // the others stop taking more
          throw error;
        });
        releases.push(local.release);
        segmentFiles[i] = local.path;
      }
    };
    // Settled, not all: a failed download must not leave others to land after the clean-up.
    const downloads = await Promise.allSettled(
      Array.from({ length: Math.min(JOIN_DOWNLOADS, keys.length) }, download),
    );
    for (const result of downloads) if (result.status === "rejected") throw result.reason;
    mark(attempt, "downloaded");
    const recorded = JSON.parse(render.audio_json ?? "[]") as AudioInput[];
    const projectDir =
      recorded.length > 0 ? await unpackProject(services, attempt) : attempt.workDir;
    const audio = recorded.flatMap((input) => {
      const source = fromProjectRelative(input, projectDir);
      return source ? [{ ...input, source }] : [];
    });
    const output = join(
      attempt.workDir,
      "out",
      `video.${FILE_EXTENSIONS[render.format as OutputFormat]}`,
    );
    await mkdir(join(attempt.workDir, "out"), { recursive: true });
    const durationSeconds = render.frames! / render.fps;
    // The chunks burned the captions in; their soft track is added to the joined file.
    const captions = render.captions_json
      ? (JSON.parse(render.captions_json) as RenderCaptions)
      : undefined;
    const joined = await engine.joinChunks({
      segmentFiles,
      output,
      format: render.format as OutputFormat,
      quality: render.quality as Quality,
      durationSeconds,
      audio,
      // The chunks' pages could reach only this: the mix downloads no more (issue 41).
      allowNetwork: services.ctx.config.allowPageNetwork,
      ...(captions?.softTrack ? { captions } : {}),
      signal: attempt.signal,
    });
    if (joined.warnings.length > 0) attempt.details.joinWarnings = joined.warnings;
    if (attempt.signal.aborted) throw attempt.signal.reason;
    mark(attempt, "rendered");
    const videoKey = await storeFile(
      services,
      attempt,
      `${renderPrefix(attempt)}/${lease.attempt}/video.${FILE_EXTENSIONS[render.format as OutputFormat]}`,
      output,
    );
    mark(attempt, "stored");
    const finished = await queue.finish(lease, "done", async (trx) => {
      const now = ctx.now();
      const completed = await completeRender(
        trx,
        render,
        { videoKey, thumbnailKey: render.thumbnail_key, durationSeconds },
        now,
      );
      if (completed) await enqueueWebhook(trx, completed, now);
    });
    if (finished) {
      // The render's finished line counts the chunks that were started a second time.
      const speculative = await speculativeCounts(ctx.db, render.id);
      attempt.details.speculative = speculative.started;
      attempt.details.speculativeWon = speculative.won;
      // The segments served their purpose; the thumbnail stays with the render.
      for (const chunk of chunks) {
        for (const key of JSON.parse(chunk.segments_json!) as string[]) {
          await ctx.store.delete(key).catch(() => undefined);
        }
      }
    }
    return finishedIf(finished);
  } finally {
    for (const release of releases) await release().catch(() => undefined);
  }
}
