// A whole render: one worker renders the whole video (the embedded default, and short renders),
// stores the video and thumbnail, and completes and charges the render in the transaction that
// finishes its job.
import { join } from "node:path";
import { FILE_EXTENSIONS, type OutputFormat } from "../../shared/render-options";
import { enqueueWebhook } from "../webhooks/webhooks";
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
import { completeRender, writeProgress } from "./render-repository";

export async function runWholeJob(services: JobServices, attempt: Attempt): Promise<JobResult> {
  const { ctx, queue, engine } = services;
  const { render } = attempt;
  const projectDir = await unpackProject(services, attempt);
  const result = await engine.renderComposition({
    ...renderOptions(services, attempt, projectDir),
    output: join(attempt.workDir, "out", `video.${FILE_EXTENSIONS[render.format as OutputFormat]}`),
    thumbnail: true,
    onProgress: attemptProgress(attempt, (progress) =>
      writeProgress(ctx.db, render.id, Math.min(0.99, progress.framesDone / progress.framesTotal)),
    ),
  });
  if (attempt.signal.aborted) throw attempt.signal.reason;
  mark(attempt, "rendered");
  const prefix = `${renderPrefix(attempt)}/${attempt.lease.attempt}`;
  const videoKey = await storeFile(
    services,
    attempt,
    `${prefix}/video.${FILE_EXTENSIONS[render.format as OutputFormat]}`,
    result.outputPath,
  );
  const thumbnailKey = result.thumbnailPath
    ? await storeFile(services, attempt, `${prefix}/thumbnail.jpg`, result.thumbnailPath)
    : null;
  mark(attempt, "stored");
  const finished = await queue.finish(attempt.lease, "done", async (trx) => {
    const now = ctx.now();
    const completed = await completeRender(
      trx,
      render,
      {
        videoKey,
        thumbnailKey,
        durationSeconds: result.durationSeconds,
        warnings: result.warnings,
        ...(result.libraries ? { libraries: result.libraries } : {}),
      },
      now,
    );
    if (completed) await enqueueWebhook(trx, completed, now);
  });
  return finishedIf(finished);
}
