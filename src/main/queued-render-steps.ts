// One queued render's way through the client core, told as the queue's stages (SPEC.md section 7:
// zip, upload, queued, rendering, download): a queued render without a render id runs the core
// pipeline up to the submit; then every queued render, new or re-attached after a restart, shares
// the core's finish (poll -> download). Core events become stage and progress changes of the queued
// render record. A row of a batch is taken there by its batch's runner (core/batch.ts: the one
// upload, the row's key).
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { RenderRecord } from "../shared/api";
import type { QueuedRenderStage } from "../shared/ipc";
import { FILE_EXTENSIONS } from "../shared/render-options";
import type { ApiClient } from "../core/index";
import { downloadOutputs, otherOutputPaths } from "../core/index";
import type { BatchRunner } from "../core/index";
import { finishRender, renderOnService, type RenderEvent } from "../core/index";
import { appError } from "./ipc-errors";
import { EtaMeter } from "./queued-render-progress";
import type { QueuedRenderRecord, QueueStore } from "./queue-store";

export interface QueuedRenderStepOptions {
  client: ApiClient;
  store: QueueStore;
  signal: AbortSignal;
  now: () => number;
  pollIntervalMs: number;
  tempDir?: string | undefined;
  /** The runner of a batch row's batch (core/batch.ts: its one upload, the row's key). */
  batchRunner: (queuedRender: QueuedRenderRecord) => BatchRunner;
}

/** Takes `queuedRender` from wherever it stands to a downloaded video, recording every step. */
export async function runQueuedRenderSteps(
  queuedRender: QueuedRenderRecord,
  options: QueuedRenderStepOptions,
): Promise<void> {
  const { client, store, signal } = options;
  const eta = new EtaMeter(options.now);
  let submitted = false;
  let downloadOnly = false;
  const onEvent = (event: RenderEvent) =>
    submitted
      ? onFinishEvent(store, queuedRender, event, eta, downloadOnly)
      : onSubmitEvent(store, queuedRender, event, eta);
  const onSubmitted = async (render: { renderId: string; assetId: string | undefined }) => {
    if (!queuedRender.renderId) await store.change(queuedRender, render);
    submitted = true;
    downloadOnly = queuedRender.stage === "download";
    if (!downloadOnly && queuedRender.stage !== "rendering") {
      await store.change(queuedRender, {
        stage: "queued",
        progress: 0,
        bytes: undefined,
        etaSeconds: undefined,
      });
    }
  };
  const outputPath = (record: RenderRecord) =>
    (queuedRender.outputPath ??= queuedRender.batch
      ? batchRowPath(queuedRender.outputDir, queuedRender.batch.fileName)
      : join(queuedRender.outputDir, titledFileName(queuedRender, record, queuedRender.outputDir)));
  // The app's sizes and extras are the request's whole `outputs`: its first is the main file.
  const { outputs, ...queuedRenderSettings } = queuedRender.settings;
  const settings = {
    composition: queuedRender.source.type === "render" ? "" : queuedRender.source.composition,
    ...queuedRenderSettings,
    ...(outputs ? { main: outputs[0], also: outputs.slice(1) } : {}),
    title: queuedRender.settings.title ?? queuedRender.title,
  };

  if (queuedRender.source.type === "batch") {
    const rendered = await options.batchRunner(queuedRender).renderRow(
      {
        row: queuedRender.batch!.row,
        settings,
        output: outputPath,
        idempotencyKey: queuedRender.idempotencyKey,
        assetId: queuedRender.assetId,
        renderId: queuedRender.renderId,
        pollIntervalMs: options.pollIntervalMs,
      },
      { client, signal, onEvent, onSubmitted },
    );
    queuedRender.sizeBytes = rendered.sizeBytes;
    return;
  }
  if (!queuedRender.renderId) {
    if (queuedRender.source.type === "render")
      throw appError("internal_error", "A queued download lost its render id.");
    const result = await renderOnService(
      {
        ...settings,
        client,
        project:
          queuedRender.source.type === "dir"
            ? { type: "dir", dir: queuedRender.source.dir }
            : { type: "asset_id", assetId: queuedRender.source.assetId },
        idempotencyKey: queuedRender.idempotencyKey,
        wait: false,
        ...(options.tempDir ? { tempDir: options.tempDir } : {}),
      },
      { signal, onEvent },
    );
    await onSubmitted({ renderId: result.renderId, assetId: result.assetId });
  } else await onSubmitted({ renderId: queuedRender.renderId, assetId: queuedRender.assetId });
  const finished = await finishRender(client, queuedRender.renderId!, {
    pollIntervalMs: options.pollIntervalMs,
    signal,
    outputPath,
    onEvent,
  });
  queuedRender.sizeBytes = finished.sizeBytes;
  if (finished.record.outputs.length > 1)
    await downloadOtherOutputs(queuedRender, finished, options, eta);
}

/**
 * The files after the first of a render with several outputs (sizes, a GIF, a poster), saved beside
 * it under its name with what tells them apart (`…-9x16.mp4`, `…-2.5s.png`: named by
 * shared/outputs.ts, as the CLI names them). Their paths are recorded before any download, so a
 * restarted queued render saves them to the same names; one already saved (a resumed or repeated
 * download) is not fetched again.
 */
async function downloadOtherOutputs(
  queuedRender: QueuedRenderRecord,
  finished: { record: RenderRecord; outputPath: string; sizeBytes: number },
  options: QueuedRenderStepOptions,
  eta: EtaMeter,
): Promise<void> {
  const { record } = finished;
  const known = new Map(queuedRender.outputs?.map((output) => [output.index, output]));
  const paths = new Map([
    [0, finished.outputPath],
    ...otherOutputPaths(
      record,
      finished.outputPath,
      new Map(
        queuedRender.outputs?.flatMap((output) =>
          output.path ? [[output.index, output.path]] : [],
        ),
      ),
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
  await options.store.change(queuedRender, { outputs });
  const missing = outputs.filter(
    (output) => output.index !== 0 && !(existsSync(output.path) && output.sizeBytes !== undefined),
  );
  await downloadOutputs(options.client, record, missing, {
    signal: options.signal,
    onProgress: (bytes, total) =>
      transferProgress(options.store, queuedRender, eta, "download", bytes, total),
    onSaved: async (saved) => {
      outputs.find((output) => output.index === saved.index)!.sizeBytes = saved.sizeBytes;
      await options.store.change(queuedRender, { outputs: [...outputs] });
    },
  });
}

function onSubmitEvent(
  store: QueueStore,
  queuedRender: QueuedRenderRecord,
  event: RenderEvent,
  eta: EtaMeter,
): void {
  switch (event.type) {
    case "stage": {
      const stage: QueuedRenderStage =
        event.stage === "scan" || event.stage === "archive"
          ? "zip"
          : event.stage === "upload"
            ? "upload"
            : "queued";
      if (stage !== queuedRender.stage)
        void store.change(queuedRender, {
          stage,
          progress: 0,
          bytes: undefined,
          etaSeconds: undefined,
        });
      return;
    }
    case "upload-progress":
      transferProgress(store, queuedRender, eta, "upload", event.bytes, event.totalBytes);
      return;
    case "state":
      // Written before the next step starts, so a kill after this point re-attaches.
      if (
        event.state.assetId !== queuedRender.assetId ||
        event.state.renderId !== queuedRender.renderId
      ) {
        void store.change(queuedRender, {
          assetId: event.state.assetId,
          renderId: event.state.renderId,
        });
      }
      return;
    default:
      return;
  }
}

function onFinishEvent(
  store: QueueStore,
  queuedRender: QueuedRenderRecord,
  event: RenderEvent,
  eta: EtaMeter,
  downloadOnly: boolean,
): void {
  switch (event.type) {
    case "render-status":
      if (event.record.status === "failed") queuedRender.renderFailed = true;
      if (!downloadOnly && event.record.status === "rendering") {
        void store.change(queuedRender, {
          stage: "rendering",
          progress: event.record.progress,
          etaSeconds: eta.estimate("rendering", event.record.progress),
        });
      }
      return;
    case "stage":
      if (event.stage === "download") {
        // The output path is on the record by now (finishRender asked for it before this event).
        void store.change(queuedRender, {
          stage: "download",
          progress: 0,
          bytes: undefined,
          etaSeconds: undefined,
        });
      }
      return;
    case "download-progress":
      transferProgress(store, queuedRender, eta, "download", event.bytes, event.totalBytes);
      return;
    case "warning":
      // The service's findings about the page, read off the finished record (each once: a
      // re-attached or repeated download reads them again).
      if (!queuedRender.warnings?.includes(event.message))
        void store.change(queuedRender, {
          warnings: [...(queuedRender.warnings ?? []), event.message],
        });
      return;
    default:
      return;
  }
}

/** Bytes moved in an upload or a download, as the queued render's progress, bytes and ETA. */
function transferProgress(
  store: QueueStore,
  queuedRender: QueuedRenderRecord,
  eta: EtaMeter,
  stage: "upload" | "download",
  bytes: number,
  total: number | undefined,
): void {
  const fraction = total ? bytes / total : 0;
  void store.change(
    queuedRender,
    {
      progress: fraction,
      bytes: { done: bytes, total },
      etaSeconds: eta.estimate(stage, fraction),
    },
    { progressOnly: true },
  );
}

/**
 * A creator's file name: the queued render's title (the project, and its title variable) and the
 * day it was queued, e.g. `lower-third Grace Hopper 2026-11-26.mp4`, never an id; ` (2)` and on
 * when the folder already holds one.
 */
export function titledFileName(
  queuedRender: Pick<QueuedRenderRecord, "title" | "createdAt">,
  record: Pick<RenderRecord, "format">,
  folder: string,
  exists: (path: string) => boolean = existsSync,
): string {
  const name = queuedRender.title
    .normalize("NFC")
    // eslint-disable-next-line no-control-regex -- control characters are what it removes
    .replace(/[/\\:*?"<>|\u0000-\u001f·]+/g, " ")
    .replace(/\s+/g, " ")
    .replace(/^[\s.]+|\s+$/g, "")
    .slice(0, 80);
  const created = new Date(queuedRender.createdAt);
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
