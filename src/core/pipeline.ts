// The whole cloud render as one function: scan -> archive -> upload (create, PUT, complete) ->
// submit -> poll -> download. Used by `svc cloud render` and the desktop app. Each stage reports
// typed events (no printing here); `state` events carry what a caller must persist to resume
// (asset id, render id, output path). One idempotency key per run (the caller's, or a generated
// one) goes on both POSTs, so retries inside the run never create a second asset, render or charge.
import type { RenderRecord } from "../shared/api";
import type { AspectRatio } from "../shared/render-options";
import type { ApiClient } from "./api-client";
import type { ArchiveReport } from "../shared/archive-report";
import {
  defaultOutputPath,
  downloadOutputs,
  downloadRender,
  otherOutputPaths,
  type DownloadedOutput,
} from "./download";
import { interruptedError } from "./errors";
import { pollUntilTerminal, renderFailedError } from "./poll";
import { publishProject } from "./publish";
import {
  buildRenderRequest,
  checkIdempotencyKey,
  checkSettings,
  type ProjectSource,
  type RenderSettings,
} from "./render-request";

export type { DownloadedOutput };

export type RenderStage = "scan" | "archive" | "upload" | "submit" | "render" | "download";

export type RenderEvent =
  | { type: "stage"; stage: RenderStage }
  | { type: "warning"; message: string }
  | { type: "archive"; report: ArchiveReport }
  | { type: "upload-progress"; bytes: number; totalBytes: number }
  | { type: "render-status"; record: RenderRecord }
  | { type: "download-progress"; bytes: number; totalBytes: number | undefined }
  | { type: "state"; state: ServiceRenderState };

/** Everything needed to pick the run up again (e.g. `svc cloud download <renderId>`). */
export interface ServiceRenderState {
  idempotencyKey: string;
  assetId?: string;
  renderId?: string;
  outputPath?: string;
}

export interface ServiceRenderOptions extends RenderSettings {
  client: ApiClient;
  project: ProjectSource;
  /** Submit and return without waiting (--no-wait). */
  wait?: boolean;
  /** Download destination; default `renders/<render_id>.<ext>` under `cwd`. */
  output?: string | undefined;
  cwd?: string;
  pollIntervalMs?: number;
  maxWaitMs?: number;
  /** The caller's key (checked here), sent on the upload and the submit alike. */
  idempotencyKey: string;
  /** Folder for the temp zip. */
  tempDir?: string;
  uploadLimitBytes?: number;
}

export interface ServiceRenderResult {
  assetId: string | undefined;
  renderId: string;
  record: RenderRecord | undefined;
  outputPath: string | undefined;
  sizeBytes: number | undefined;
  /** Every file of the render (the main one first), once downloaded. */
  files?: DownloadedOutput[];
}

export async function renderOnService(
  options: ServiceRenderOptions,
  hooks: { signal?: AbortSignal; onEvent?: (event: RenderEvent) => void } = {},
): Promise<ServiceRenderResult> {
  const { signal } = hooks;
  const emit = (event: RenderEvent) => hooks.onEvent?.(event);
  checkSettings(options);
  const idempotencyKey = checkIdempotencyKey(options.idempotencyKey);
  const state: ServiceRenderState = { idempotencyKey };
  const report = (change: Partial<ServiceRenderState>) => {
    Object.assign(state, change);
    emit({ type: "state", state: { ...state } });
  };
  const { client } = options;

  let project: { type: "asset_id"; asset_id: string } | { type: "url"; url: string };
  let aspectRatio: AspectRatio | undefined = options.aspectRatio;
  if (options.project.type === "dir") {
    const published = await publishProject(
      client,
      {
        dir: options.project.dir,
        composition: options.composition,
        aspectRatio: options.aspectRatio,
        variables: options.variables,
        strictVariables: options.strictVariables,
        idempotencyKey,
        tempDir: options.tempDir,
        uploadLimitBytes: options.uploadLimitBytes,
      },
      { signal, onEvent: emit },
    );
    aspectRatio = published.scan.aspectRatio;
    report({ assetId: published.assetId });
    project = { type: "asset_id", asset_id: published.assetId };
  } else if (options.project.type === "asset_id") {
    report({ assetId: options.project.assetId });
    project = { type: "asset_id", asset_id: options.project.assetId };
  } else {
    project = { type: "url", url: options.project.url };
  }

  throwIfAborted(signal);
  emit({ type: "stage", stage: "submit" });
  // A stop while the submit is on its way waits for its answer (a little while): the render may
  // already exist on the service, and only the answer names it, so the caller can cancel it
  // instead of leaving it to run and be charged.
  const answer = untilAnswered(signal, SUBMIT_ANSWER_WAIT_MS);
  let submitted;
  try {
    submitted = await client.submitRender(
      buildRenderRequest(project, options, aspectRatio),
      idempotencyKey,
      answer.signal,
    );
  } finally {
    answer.dispose();
  }
  const renderId = submitted.render_id;
  report({ renderId });
  throwIfAborted(signal);
  if (options.wait === false) {
    return {
      assetId: state.assetId,
      renderId,
      record: undefined,
      outputPath: undefined,
      sizeBytes: undefined,
    };
  }

  const finished = await finishRender(client, renderId, {
    pollIntervalMs: options.pollIntervalMs,
    maxWaitMs: options.maxWaitMs,
    signal,
    outputPath: (record) => {
      const outputPath = options.output ?? defaultOutputPath(record, options.cwd);
      report({ outputPath });
      return outputPath;
    },
    onEvent: emit,
    allOutputs: true,
  });
  return { assetId: state.assetId, renderId, ...finished };
}

export interface FinishRenderOptions {
  pollIntervalMs?: number | undefined;
  maxWaitMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Where the video goes, decided once the finished record (format, id) is known. */
  outputPath: (record: RenderRecord) => string;
  /** `render` and `download` stages, every changed record, the page's warnings, download progress. */
  onEvent?: ((event: RenderEvent) => void) | undefined;
  /**
   * A render with several outputs: download the others too, next to the main file
   * (shared/outputs.ts names). The CLI asks for it; the app downloads them itself
   * (queued-render-steps.ts, recording each path first so a resumed queued render finds them).
   */
  allOutputs?: boolean | undefined;
}

/**
 * The tail every caller shares (a new run, `svc cloud download`, the app resuming a queued render):
 * wait for the render to end, fail with its reason, or download the video (temp file + rename, a
 * fresh signed URL on expiry).
 */
export async function finishRender(
  client: ApiClient,
  renderId: string,
  options: FinishRenderOptions,
): Promise<{
  record: RenderRecord;
  outputPath: string;
  sizeBytes: number;
  files: DownloadedOutput[];
}> {
  const { signal } = options;
  const emit = (event: RenderEvent) => options.onEvent?.(event);
  emit({ type: "stage", stage: "render" });
  const record = await pollUntilTerminal(client, renderId, {
    intervalMs: options.pollIntervalMs,
    maxWaitMs: options.maxWaitMs,
    signal,
    onUpdate: (update) => emit({ type: "render-status", record: update }),
  });
  // What the service's engine found about the page (a missing file, a page that could not jump to
  // a chunk's start): known only now, and worth seeing even when the render failed.
  for (const warning of record.warnings) {
    if (warning.code === "composition") emit({ type: "warning", message: warning.message });
  }
  if (record.status === "failed") throw renderFailedError(record);
  const outputPath = options.outputPath(record);
  emit({ type: "stage", stage: "download" });
  const onProgress = (bytes: number, totalBytes: number | undefined) =>
    emit({ type: "download-progress", bytes, totalBytes });
  const downloaded = await downloadRender(client, record, outputPath, { signal, onProgress });
  const files: DownloadedOutput[] = [{ index: 0, ...downloaded }];
  // A render with several outputs: the others next to the main file (shared/outputs.ts names).
  if (options.allOutputs)
    files.push(
      ...(await downloadOutputs(client, record, otherOutputPaths(record, downloaded.path), {
        signal,
        onProgress,
      })),
    );
  return { record, outputPath: downloaded.path, sizeBytes: downloaded.sizeBytes, files };
}

/** How long a stopped run still waits for the submit's answer (the render's id). */
export const SUBMIT_ANSWER_WAIT_MS = 15_000;

/**
 * A signal that aborts `waitMs` after `signal` does (or never, without one): a request sent with
 * it outlives a stop for a while, to be answered.
 */
function untilAnswered(
  signal: AbortSignal | undefined,
  waitMs: number,
): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onAbort = () => {
    timer = setTimeout(() => controller.abort(signal?.reason), waitMs);
  };
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    },
  };
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw interruptedError();
}
