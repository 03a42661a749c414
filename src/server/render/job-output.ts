// One output of a render submitted with `outputs` (issue 25): a video at its own format,
// resolution and aspect ratio (the page laid out at that viewport, with data-aspect-ratio set), or
// a still; the engine's renderOutput decides which it draws. The file, its thumbnail and its size
// are stored under the output's own key; the output is completed in the transaction that finishes
// its job, with its `render.output.completed` webhook, and the output that completes the set
// completes and charges the render (render-outputs.ts). Each output renders whole on one worker;
// the outputs of a render run side by side on as many workers.
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { outputExtension, type OutputFileFormat, type OutputKind } from "../../shared/outputs";
import type { AspectRatio, Resolution } from "../../shared/render-options";
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
  const file = {
    kind: output.kind as OutputKind,
    format: output.format as OutputFileFormat,
    time: output.time_seconds,
  };
  const name = `${file.kind}.${outputExtension(file)}`;
  const result = await engine.renderOutput({
    ...options,
    file,
    output: join(outDir, name),
    thumbnail: true,
    onProgress: attemptProgress(attempt, (progress) =>
      writeOutputProgress(ctx.db, render.id, progress.framesDone / progress.framesTotal),
    ),
  });
  if (attempt.signal.aborted) throw attempt.signal.reason;
  mark(attempt, "rendered");
  const fileKey = await storeFile(services, attempt, `${prefix}/${name}`, result.outputPath);
  const done: OutputDone = {
    fileKey,
    // A still is its own thumbnail.
    thumbnailKey:
      result.thumbnailPath === result.outputPath
        ? fileKey
        : result.thumbnailPath
          ? await storeFile(services, attempt, `${prefix}/thumbnail.jpg`, result.thumbnailPath)
          : null,
    bytes: (await stat(result.outputPath)).size,
    durationSeconds: result.durationSeconds,
    warnings: result.warnings,
    ...(result.libraries ? { libraries: result.libraries } : {}),
  };
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
