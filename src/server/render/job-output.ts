// One output of a render submitted with `outputs` (issue 25): a video at its own format,
// resolution and aspect ratio (the page laid out at that viewport, with data-aspect-ratio set), or
// a still drawn by the engine's still path. The file, its thumbnail and its size are stored under
// the output's own key; the output is completed in the transaction that finishes its job, with its
// `render.output.completed` webhook, and the output that completes the set completes and charges
// the render (render-outputs.ts). Each output renders whole on one worker; the outputs of a render
// run side by side on as many workers.
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { STILL_FILE_EXTENSIONS, type StillFormat } from "../../shared/outputs";
import {
  FILE_EXTENSIONS,
  type AspectRatio,
  type OutputFormat,
  type Resolution,
} from "../../shared/render-options";
import { enqueueOutputWebhook, enqueueWebhook } from "../webhooks/webhooks";
import {
  mark,
  attemptProgress,
  renderOptions,
  renderPrefix,
  storeFile,
  unpackProject,
  finishedIf,
  type Attempt,
  type JobResult,
  type JobServices,
} from "./attempt";
import {
  completeOutput,
  loadOutput,
  markOutputRendering,
  writeOutputProgress,
  type OutputDone,
} from "./output-repository";

export async function runOutputJob(
  services: JobServices,
  attempt: Attempt,
  index: number,
): Promise<JobResult> {
  const { ctx, queue, engine } = services;
  const { render, lease } = attempt;
  const output = await loadOutput(ctx.db, render.id, index);
  if (output.status === "completed") {
    return finishedIf(await queue.finish(lease, "done", async () => {}));
  }
  await markOutputRendering(ctx.db, render.id, index, ctx.now());
  const projectDir = await unpackProject(services, attempt);
  const options = {
    ...renderOptions(services, attempt, projectDir),
    resolution: output.resolution as Resolution,
    aspectRatio: output.aspect_ratio as AspectRatio,
    adaptAspectRatio: true,
  };
  const outDir = join(attempt.workDir, "out");
  const prefix = `${renderPrefix(attempt)}/outputs/${index}-${lease.attempt}`;
  let done: OutputDone;
  if (output.kind === "still") {
    const format = output.format as StillFormat;
    const name = `still.${STILL_FILE_EXTENSIONS[format]}`;
    const result = await engine.renderStill({
      ...options,
      output: join(outDir, name),
      time: output.time_seconds ?? 0,
      stillFormat: format,
    });
    if (attempt.signal.aborted) throw attempt.signal.reason;
    mark(attempt, "rendered");
    const fileKey = await storeFile(services, attempt, `${prefix}/${name}`, result.outputPath);
    // A still is its own thumbnail.
    done = {
      fileKey,
      thumbnailKey: fileKey,
      bytes: (await stat(result.outputPath)).size,
      durationSeconds: null,
      warnings: result.warnings,
    };
  } else {
    const format = output.format as OutputFormat;
    const name = `video.${FILE_EXTENSIONS[format]}`;
    const result = await engine.renderComposition({
      ...options,
      format,
      output: join(outDir, name),
      thumbnail: true,
      onProgress: attemptProgress(attempt, (progress) =>
        writeOutputProgress(ctx.db, render.id, progress.framesDone / progress.framesTotal),
      ),
    });
    if (attempt.signal.aborted) throw attempt.signal.reason;
    mark(attempt, "rendered");
    done = {
      fileKey: await storeFile(services, attempt, `${prefix}/${name}`, result.outputPath),
      thumbnailKey: result.thumbnailPath
        ? await storeFile(services, attempt, `${prefix}/thumbnail.jpg`, result.thumbnailPath)
        : null,
      bytes: (await stat(result.outputPath)).size,
      durationSeconds: result.durationSeconds,
      warnings: result.warnings,
      ...(result.libraries ? { libraries: result.libraries } : {}),
    };
  }
  mark(attempt, "stored");
  let recorded = false;
  const finished = await queue.finish(lease, "done", async (trx) => {
    const now = ctx.now();
    const completed = await completeOutput(trx, render, index, done, now);
    if (!completed) return;
    recorded = true;
    await enqueueOutputWebhook(trx, render, index, now);
    if (completed.completedRender) await enqueueWebhook(trx, completed.completedRender, now);
  });
  if (finished && !recorded) {
    // The render ended meanwhile (cancelled, failed elsewhere): nothing keeps these files.
    for (const key of attempt.stored) await ctx.store.delete(key).catch(() => undefined);
  }
  return finishedIf(finished);
}
