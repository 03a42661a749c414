// One job's way through the client core, told as the queue's stages (SPEC.md section 7: zip,
// upload, queued, rendering, download): a job without a render id runs the core pipeline up to
// the submit; then every job, new or re-attached after a restart, shares the core's finish
// (poll -> download). Core events become stage and progress changes of the job record. A row of
// a batch is taken there by its batch's runner (core/batch.ts: the one upload, the row's key).
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { RenderRecord } from "../shared/api";
import type { JobStage } from "../shared/ipc";
import { FILE_EXTENSIONS } from "../shared/render-options";
import type { ApiClient } from "../core/index";
import { downloadOutputs, otherOutputPaths } from "../core/index";
import type { BatchRunner } from "../core/index";
import { finishRender, renderOnService, type RenderEvent } from "../core/index";
import { appError } from "./ipc-errors";
import { EtaMeter } from "./job-progress";
import type { JobRecord, JobStore } from "./job-store";

export interface JobStepOptions {
  client: ApiClient;
  store: JobStore;
  signal: AbortSignal;
  now: () => number;
  pollIntervalMs: number;
  tempDir?: string | undefined;
  /** The runner of a batch row's batch (core/batch.ts: its one upload, the row's key). */
  batchRunner: (job: JobRecord) => BatchRunner;
}

/** Takes `job` from wherever it stands to a downloaded video, recording every step. */
export async function runJobSteps(job: JobRecord, options: JobStepOptions): Promise<void> {
  const { client, store, signal } = options;
  const eta = new EtaMeter(options.now);
  let submitted = false;
  let downloadOnly = false;
  const onEvent = (event: RenderEvent) =>
    submitted
      ? onFinishEvent(store, job, event, eta, downloadOnly)
      : onSubmitEvent(store, job, event, eta);
  const onSubmitted = async (render: { renderId: string; assetId: string | undefined }) => {
    if (!job.renderId) await store.change(job, render);
    submitted = true;
    downloadOnly = job.stage === "download";
    if (!downloadOnly && job.stage !== "rendering") {
      await store.change(job, {
        stage: "queued",
        progress: 0,
        bytes: undefined,
        etaSeconds: undefined,
      });
    }
  };
  const outputPath = (record: RenderRecord) =>
    (job.outputPath ??= job.batch
      ? batchRowPath(job.outputDir, job.batch.fileName)
      : join(job.outputDir, titledFileName(job, record, job.outputDir)));
  // The app's sizes and extras are the request's whole `outputs`: its first is the main file.
  const { outputs, ...jobSettings } = job.settings;
  const settings = {
    composition: job.source.type === "render" ? "" : job.source.composition,
    ...jobSettings,
    ...(outputs ? { main: outputs[0], also: outputs.slice(1) } : {}),
    title: job.settings.title ?? job.title,
  };

  if (job.source.type === "batch") {
    const rendered = await options.batchRunner(job).renderRow(
      {
        row: job.batch!.row,
        settings,
        output: outputPath,
        idempotencyKey: job.idempotencyKey,
        assetId: job.assetId,
        renderId: job.renderId,
        pollIntervalMs: options.pollIntervalMs,
      },
      { client, signal, onEvent, onSubmitted },
    );
    job.sizeBytes = rendered.sizeBytes;
    return;
  }
  if (!job.renderId) {
    if (job.source.type === "render")
      throw appError("internal_error", "A download job lost its render id.");
    const result = await renderOnService(
      {
        ...settings,
        client,
        project:
          job.source.type === "dir"
            ? { type: "dir", dir: job.source.dir }
            : { type: "asset_id", assetId: job.source.assetId },
        idempotencyKey: job.idempotencyKey,
        wait: false,
        ...(options.tempDir ? { tempDir: options.tempDir } : {}),
      },
      { signal, onEvent },
    );
    await onSubmitted({ renderId: result.renderId, assetId: result.assetId });
  } else await onSubmitted({ renderId: job.renderId, assetId: job.assetId });
  const finished = await finishRender(client, job.renderId!, {
    pollIntervalMs: options.pollIntervalMs,
    signal,
    outputPath,
    onEvent,
  });
  job.sizeBytes = finished.sizeBytes;
  if (finished.record.outputs.length > 1) await downloadOtherOutputs(job, finished, options, eta);
}

/**
 * The files after the first of a render with several outputs (sizes, a GIF, a poster), saved
 * beside it under its name with what tells them apart (`…-9x16.mp4`, `…-2.5s.png`: named by
 * shared/outputs.ts, as the CLI names them). Their paths are recorded before any download, so a
 * restarted job saves them to the same names; one already saved (a resumed or repeated download)
 * is not fetched again.
 */
async function downloadOtherOutputs(
  job: JobRecord,
  finished: { record: RenderRecord; outputPath: string; sizeBytes: number },
  options: JobStepOptions,
  eta: EtaMeter,
): Promise<void> {
  const { record } = finished;
  const known = new Map(job.outputs?.map((output) => [output.index, output]));
  const paths = new Map([
    [0, finished.outputPath],
    ...otherOutputPaths(
      record,
      finished.outputPath,
      new Map(job.outputs?.flatMap((output) => (output.path ? [[output.index, output.path]] : []))),
    ).map(({ index, path }) => [index, path] as const),
  ]);
  const outputs = record.outputs.map((output) => ({
    index: output.index,
    kind: output.kind,
    format: output.format,
    aspectRatio: output.aspect_ratio,
    width: output.width,
    height: output.height,
    time: output.time,
    path: paths.get(output.index)!,
    sizeBytes: output.index === 0 ? finished.sizeBytes : known.get(output.index)?.sizeBytes,
  }));
  await options.store.change(job, { outputs });
  const missing = outputs.filter(
    (output) => output.index !== 0 && !(existsSync(output.path) && output.sizeBytes !== undefined),
  );
  await downloadOutputs(options.client, record, missing, {
    signal: options.signal,
    onProgress: (bytes, total) =>
      transferProgress(options.store, job, eta, "download", bytes, total),
    onSaved: async (saved) => {
      outputs.find((output) => output.index === saved.index)!.sizeBytes = saved.sizeBytes;
      await options.store.change(job, { outputs: [...outputs] });
    },
  });
}

function onSubmitEvent(store: JobStore, job: JobRecord, event: RenderEvent, eta: EtaMeter): void {
  switch (event.type) {
    case "stage": {
      const stage: JobStage =
        event.stage === "scan" || event.stage === "archive"
          ? "zip"
          : event.stage === "upload"
            ? "upload"
            : "queued";
      if (stage !== job.stage)
        void store.change(job, { stage, progress: 0, bytes: undefined, etaSeconds: undefined });
      return;
    }
    case "upload-progress":
      transferProgress(store, job, eta, "upload", event.bytes, event.totalBytes);
      return;
    case "state":
      // Written before the next step starts, so a kill after this point re-attaches.
      if (event.state.assetId !== job.assetId || event.state.renderId !== job.renderId) {
        void store.change(job, { assetId: event.state.assetId, renderId: event.state.renderId });
      }
      return;
    default:
      return;
  }
}

function onFinishEvent(
  store: JobStore,
  job: JobRecord,
  event: RenderEvent,
  eta: EtaMeter,
  downloadOnly: boolean,
): void {
  switch (event.type) {
    case "render-status":
      if (event.record.status === "failed") job.renderFailed = true;
      if (!downloadOnly && event.record.status === "rendering") {
        void store.change(job, {
          stage: "rendering",
          progress: event.record.progress,
          etaSeconds: eta.estimate("rendering", event.record.progress),
        });
      }
      return;
    case "stage":
      if (event.stage === "download") {
        // The output path is on the record by now (finishRender asked for it before this event).
        void store.change(job, {
          stage: "download",
          progress: 0,
          bytes: undefined,
          etaSeconds: undefined,
        });
      }
      return;
    case "download-progress":
      transferProgress(store, job, eta, "download", event.bytes, event.totalBytes);
      return;
    case "warning":
      // The service's findings about the page, read off the finished record (each once: a
      // re-attached or repeated download reads them again).
      if (!job.warnings?.includes(event.message))
        void store.change(job, { warnings: [...(job.warnings ?? []), event.message] });
      return;
    default:
      return;
  }
}

/** Bytes moved in an upload or a download, as the job's progress, bytes and ETA. */
function transferProgress(
  store: JobStore,
  job: JobRecord,
  eta: EtaMeter,
  stage: "upload" | "download",
  bytes: number,
  total: number | undefined,
): void {
  const fraction = total ? bytes / total : 0;
  void store.change(
    job,
    {
      progress: fraction,
      bytes: { done: bytes, total },
      etaSeconds: eta.estimate(stage, fraction),
    },
    { progressOnly: true },
  );
}

/**
 * A creator's file name: the job's title (the project, and its title variable) and the day it
 * was queued, e.g. `lower-third Grace Hopper 2026-11-26.mp4`, never an id; ` (2)` and on when the
 * folder already holds one.
 */
export function titledFileName(
  job: Pick<JobRecord, "title" | "createdAt">,
  record: Pick<RenderRecord, "format">,
  folder: string,
  exists: (path: string) => boolean = existsSync,
): string {
  const name = job.title
    .normalize("NFC")
    // eslint-disable-next-line no-control-regex -- control characters are what it removes
    .replace(/[/\\:*?"<>|\u0000-\u001f·]+/g, " ")
    .replace(/\s+/g, " ")
    .replace(/^[\s.]+|\s+$/g, "")
    .slice(0, 80);
  const created = new Date(job.createdAt);
  const pad = (n: number) => String(n).padStart(2, "0");
  const day = `${created.getFullYear()}-${pad(created.getMonth() + 1)}-${pad(created.getDate())}`;
  const stem = `${name || "render"} ${day}`;
  const extension = FILE_EXTENSIONS[record.format];
  for (let n = 1; ; n++) {
    const file = `${stem}${n === 1 ? "" : ` (${n})`}.${extension}`;
    if (!exists(join(folder, file)) || n >= 1000) return file;
  }
}

/** A batch row's file: its name must name a file right inside the batch's folder. */
function batchRowPath(outputDir: string, fileName: string): string {
  const folder = resolve(outputDir);
  const path = resolve(folder, fileName);
  if (dirname(path) !== folder || fileName.startsWith("."))
    throw appError(
      "path_outside_output",
      `The file name "${fileName}" does not name a file in the batch's folder ${folder}.`,
      "Render the batch again from the Project screen.",
    );
  return path;
}
