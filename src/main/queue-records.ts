// The queue's records: what a queued render or a batch starts as, the inputs the app's screens send
// for them, their titles and idempotency keys, a batch's own folder under the downloads folder, how
// a queued render starts again, and which file of a finished queued render may be opened.
// RenderQueue (render-queue.ts) adds them to the store and runs them.
import { randomUUID } from "node:crypto";
import { mkdir, realpath, stat } from "node:fs/promises";
import { basename, join, resolve, sep } from "node:path";
import type { QueuedRenderSettings, QueuedRenderView } from "../shared/ipc";
import type { VariableValues } from "../shared/variables";
import { batchRowKey } from "../core/index";
import type { ApiClient } from "../core/index";
import { newIdempotencyKey } from "../core/index";
import { appError } from "./ipc-errors";
import type { BatchRecord, QueuedRenderRecord } from "./queue-store";

/** What the queue needs of the service (the app's connection to it). */
export interface QueueServiceAccess {
  client(signal?: AbortSignal): Promise<ApiClient>;
  waitUntilAvailable(signal?: AbortSignal): Promise<void>;
}

export interface SubmitQueuedRenderInput {
  dir: string;
  composition?: string | undefined;
  settings: QueuedRenderSettings;
  outputDir?: string | undefined;
}

/** A render of a project already uploaded (e.g. History's "Render again" with new variables). */
export interface SubmitAssetQueuedRenderInput {
  assetId: string;
  composition: string;
  settings: QueuedRenderSettings;
  outputDir?: string | undefined;
}

/** Many renders of one project (checked by the caller against the composition's schema). */
export interface SubmitBatchInput {
  /** The project folder (its root, as scanned). */
  dir: string;
  composition: string;
  /** Shared by every row; each row's variables replace `variables`. */
  settings: QueuedRenderSettings;
  /** Each row's captions (undefined: none): the batch's `settings.captions` are not used. */
  rows: Array<{
    row: number;
    values: VariableValues;
    fileName: string;
    captions?: QueuedRenderSettings["captions"] | undefined;
  }>;
  outputPattern: string;
  /** The batch's name (the project folder's). */
  title: string;
}

/** "intro" for scenes/intro.html: a queued render's title when nothing better names it (never an id). */
export function compositionName(composition: string): string {
  return basename(composition).replace(/\.html?$/i, "") || "render";
}

/** The app's own idempotency keys, told apart from the CLI's in the service's records. */
export function desktopIdempotencyKey(): string {
  return newIdempotencyKey("svc-desktop");
}

/** A new waiting queued render (its title, key and stage set by the caller where they differ). */
export function newQueuedRenderRecord(
  source: QueuedRenderView["source"],
  settings: QueuedRenderSettings,
  /** Where its video is saved (an absolute path). */
  outputDir: string,
  now: number,
): QueuedRenderRecord {
  return {
    id: `queued_render_${randomUUID()}`,
    revision: 0,
    title: "render",
    status: "waiting",
    stage: "waiting",
    progress: 0,
    bytes: undefined,
    etaSeconds: undefined,
    createdAt: now,
    startedAt: undefined,
    finishedAt: undefined,
    source,
    settings,
    assetId: undefined,
    renderId: undefined,
    outputPath: undefined,
    sizeBytes: undefined,
    outputs: undefined,
    error: undefined,
    warnings: undefined,
    outputDir,
    idempotencyKey: desktopIdempotencyKey(),
    renderFailed: false,
    batch: undefined,
  };
}

/** A batch and its rows, every row rendering under `<batch key>:row-N`. */
export function batchRecords(
  input: SubmitBatchInput,
  outputDir: string,
  now: number,
): { batch: BatchRecord; rows: QueuedRenderRecord[] } {
  const id = `batch_${randomUUID()}`;
  const { variables: _shared, captions: _captions, ...settings } = input.settings;
  const batch: BatchRecord = {
    id,
    revision: 0,
    title: input.title,
    createdAt: now,
    dir: input.dir,
    composition: input.composition,
    outputDir,
    outputPattern: input.outputPattern,
    settings,
    rowCount: input.rows.length,
    upload: { stage: "waiting", progress: 0, error: undefined },
    assetId: undefined,
    uploadKey: desktopIdempotencyKey(),
  };
  const rows = input.rows.map((row): QueuedRenderRecord => {
    const title = row.fileName.replace(/\.[^.]+$/, "");
    return {
      ...newQueuedRenderRecord(
        { type: "batch", batchId: id, composition: input.composition },
        {
          ...settings,
          variables: row.values,
          title,
          ...(row.captions ? { captions: row.captions } : {}),
        },
        outputDir,
        now,
      ),
      title,
      // Row N renders under `<batch key>:row-N`, the same keys as `svc cloud render --batch`.
      idempotencyKey: batchRowKey(batch.uploadKey, row.row),
      batch: { batchId: id, row: row.row, fileName: row.fileName },
    };
  });
  return { batch, rows };
}

/** `<downloads>/<project> <date> <time>` (a number added if that exists), created now. */
export async function newBatchFolder(
  /** The downloads folder (an absolute path). */
  parent: string,
  title: string,
  now: number,
): Promise<string> {
  await mkdir(parent, { recursive: true });
  const date = new Date(now);
  const pad = (n: number) => String(n).padStart(2, "0");
  const stamp = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}.${pad(date.getMinutes())}.${pad(date.getSeconds())}`;
  // eslint-disable-next-line no-control-regex -- control characters are what it removes
  const name = `${title.replace(/[/\\:*?"<>|\u0000-\u001f]+/g, "-").replace(/^\.+/, "") || "batch"} ${stamp}`;
  for (let attempt = 1; ; attempt++) {
    const folder = join(parent, attempt === 1 ? name : `${name} (${attempt})`);
    try {
      await mkdir(folder);
      return folder;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 50) throw error;
    }
  }
}

/** How a failed or cancelled queued render starts again (Retry). */
export function retryChanges(queuedRender: QueuedRenderRecord): Partial<QueuedRenderRecord> {
  // A render that is still valid on the service is picked up again; one that failed is redone
  // under a new key (the old key would replay the failed render).
  const reattach = queuedRender.renderId !== undefined && !queuedRender.renderFailed;
  return {
    status: "waiting",
    stage: reattach || queuedRender.source.type === "asset" ? "queued" : "waiting",
    progress: 0,
    bytes: undefined,
    etaSeconds: undefined,
    error: undefined,
    finishedAt: undefined,
    ...(reattach
      ? {}
      : {
          idempotencyKey: desktopIdempotencyKey(),
          assetId: queuedRender.source.type === "dir" ? undefined : queuedRender.assetId,
          renderId: queuedRender.source.type === "render" ? queuedRender.renderId : undefined,
          outputPath: undefined,
          outputs: undefined,
          warnings: undefined,
          renderFailed: false,
        }),
  };
}

/**
 * A file of a completed queued render (`output`: which of its outputs, 0 the main video), for
 * opening it: it must still exist and (symlinks followed) lie inside the folder the queued render
 * downloads to, so a tampered queue file cannot open anything else.
 */
export async function openableOutput(
  queuedRender: QueuedRenderRecord,
  output = 0,
): Promise<string> {
  const path =
    output === 0
      ? queuedRender.outputPath
      : queuedRender.outputs?.find((candidate) => candidate.index === output)?.path;
  if (queuedRender.status !== "completed" || !path) {
    throw appError("queued_render_not_completed", "Only a finished render can be opened.");
  }
  const file = await realpath(path).catch(() => undefined);
  if (!file) {
    throw appError(
      "file_missing",
      `${path} no longer exists.`,
      "Download it again from the queue.",
    );
  }
  const folder = await realpath(queuedRender.outputDir).catch(() =>
    resolve(queuedRender.outputDir),
  );
  if (!file.startsWith(folder + sep)) {
    throw appError(
      "path_outside_output",
      `${file} is not in the render's output folder ${folder}.`,
      "Download the render again from History.",
    );
  }
  return file;
}

/** A batch's folder, for "Open folder": it must still exist. */
export async function existingFolder(batch: BatchRecord): Promise<string> {
  const info = await stat(batch.outputDir).catch(() => undefined);
  if (!info?.isDirectory())
    throw appError(
      "file_missing",
      `The batch's folder ${batch.outputDir} no longer exists.`,
      "Retry the batch's rows to download their videos again.",
    );
  return batch.outputDir;
}
