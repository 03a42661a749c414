// Many renders of one template, the one runner behind `svc cloud render DIR --batch rows.csv`
// and the app's "Render many…" queue. A batch is ONE upload of the project (or an asset already
// uploaded), then one render per row against that asset with the row's own variables. Keys: the
// upload goes under the batch's key and row N's render under `<key>:row-N`, so running the batch
// again with the same key never creates a second asset or renders a row twice (the service
// replays the first answer). A row picks up where it stood (a known asset id or render id skips
// what is done), which is how the app resumes rows after a restart and how Retry re-runs them.
// The rows were planned before this runs (batch-plan.ts, src/shared/batch.ts).
//
// `BatchRunner` holds the batch's one upload and renders single rows; who schedules rows is the
// caller's: `runBatch` (the CLI) runs `concurrency` rows at a time and reports each row's end; the
// app's RenderQueue runs every row as a queued render of its persistent queue and records the
// runner's events (src/main/queue-batches.ts, queued-render-steps.ts). A row that fails does not
// stop the others.
import type { RenderRecord } from "../shared/api";
import type { CaptionStyle } from "../shared/captions";
import type { AspectRatio } from "../shared/render-options";
import type { VariableValues } from "../shared/variables";
import type { ApiClient } from "./api-client";
import { interruptedError, type ClientError } from "./errors";
import { finishRender, renderOnService, type RenderEvent } from "./pipeline";
import { publishProject, type PublishEvent } from "./publish";
import { checkIdempotencyKey, checkSettings, type RenderSettings } from "./render-request";

/** The row's key, from the batch's key. */
export function batchRowKey(key: string, row: number): string {
  return checkIdempotencyKey(`${key}:row-${row}`);
}

/** What the batch's one upload reports (awaited where it is a step the caller may record). */
export type BatchUploadEvent =
  | { type: "upload-started" }
  | { type: "publish"; event: PublishEvent }
  | { type: "asset"; assetId: string }
  | { type: "upload-failed"; error: unknown; interrupted: boolean };

export interface BatchRunnerOptions {
  /** The service, asked on every step (the app's embedded service may have restarted meanwhile). */
  client: (signal?: AbortSignal) => Promise<ApiClient>;
  project: { type: "dir"; dir: string } | { type: "asset_id"; assetId: string };
  composition: string;
  aspectRatio?: AspectRatio | undefined;
  /** The batch's key: the upload's, and the stem of every row's. */
  idempotencyKey: string;
  tempDir?: string | undefined;
  /** The batch's lifetime: aborting it stops the upload (a row's own signal stops only its wait). */
  signal?: AbortSignal | undefined;
  onEvent?: (event: BatchUploadEvent) => void | Promise<void>;
}

/** One row as it stands: what it renders, and what of it is already done. */
export interface BatchRowRun {
  row: number;
  /** Every setting of its render, its variables and title included. */
  settings: RenderSettings;
  /** Where its video goes (a function: decided once the finished render is known). */
  output: string | ((record: RenderRecord) => string);
  /** Default `<batch key>:row-N`; a row redone after its render failed gets a new one. */
  idempotencyKey?: string | undefined;
  assetId?: string | undefined;
  renderId?: string | undefined;
  /** Submit and return without waiting for the video. */
  wait?: boolean | undefined;
  pollIntervalMs?: number | undefined;
  maxWaitMs?: number | undefined;
}

export interface BatchRowHooks {
  signal?: AbortSignal | undefined;
  /** A client the caller already holds for this attempt (else the runner asks for one). */
  client?: ApiClient | undefined;
  /** The row's steps, as a single render's: waiting for the upload shows as its `upload` stage. */
  onEvent?: ((event: RenderEvent) => void) | undefined;
  /** Once the row's render exists on the service (submitted now or before), before waiting for it. */
  onSubmitted?:
    ((submitted: { renderId: string; assetId: string | undefined }) => Promise<void>) | undefined;
}

export interface BatchRowRendered {
  assetId: string | undefined;
  renderId: string;
  record: RenderRecord | undefined;
  outputPath: string | undefined;
  sizeBytes: number | undefined;
}

export class BatchRunner {
  private uploaded: { assetId: string; aspectRatio: AspectRatio | undefined } | undefined;
  private upload: Promise<{ assetId: string; aspectRatio: AspectRatio | undefined }> | undefined;

  constructor(
    private readonly options: BatchRunnerOptions,
    /** An asset the batch already uploaded (e.g. recorded before the app restarted). */
    knownAssetId?: string,
  ) {
    checkIdempotencyKey(options.idempotencyKey);
    const assetId = options.project.type === "asset_id" ? options.project.assetId : knownAssetId;
    if (assetId) this.uploaded = { assetId, aspectRatio: options.aspectRatio };
  }

  /** The batch's asset: uploaded once, by whichever caller asks first; `signal` stops only this wait. */
  async asset(
    signal?: AbortSignal,
  ): Promise<{ assetId: string; aspectRatio: AspectRatio | undefined }> {
    if (this.uploaded) return this.uploaded;
    this.upload ??= this.publish().finally(() => {
      this.upload = undefined;
    });
    const upload = this.upload;
    if (!signal) return upload;
    return new Promise((resolveAsset, reject) => {
      const onAbort = () => reject(interruptedError());
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      upload.then(resolveAsset, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

  /** Takes one row from where it stands to its video (or to submitted, with `wait: false`). */
  async renderRow(row: BatchRowRun, hooks: BatchRowHooks = {}): Promise<BatchRowRendered> {
    const { signal } = hooks;
    const emit = (event: RenderEvent) => hooks.onEvent?.(event);
    const client = hooks.client ?? (await this.options.client(signal));
    let { assetId, renderId } = row;
    if (!renderId) {
      if (!assetId) {
        emit({ type: "stage", stage: "upload" });
        assetId = (await this.asset(signal)).assetId;
      }
      const submitted = await renderOnService(
        {
          ...row.settings,
          client,
          project: { type: "asset_id", assetId },
          idempotencyKey: row.idempotencyKey ?? batchRowKey(this.options.idempotencyKey, row.row),
          wait: false,
          ...(this.options.tempDir ? { tempDir: this.options.tempDir } : {}),
        },
        { ...(signal ? { signal } : {}), onEvent: emit },
      );
      renderId = submitted.renderId;
      assetId = submitted.assetId;
    }
    await hooks.onSubmitted?.({ renderId, assetId });
    if (row.wait === false)
      return { assetId, renderId, record: undefined, outputPath: undefined, sizeBytes: undefined };
    const { output } = row;
    const finished = await finishRender(client, renderId, {
      pollIntervalMs: row.pollIntervalMs,
      maxWaitMs: row.maxWaitMs,
      signal,
      outputPath: typeof output === "string" ? () => output : output,
      onEvent: emit,
    });
    return { assetId, renderId, ...finished };
  }

  private async publish(): Promise<{ assetId: string; aspectRatio: AspectRatio | undefined }> {
    const { project, signal } = this.options;
    if (project.type !== "dir") throw new Error("An uploaded asset needs no upload.");
    const emit = async (event: BatchUploadEvent) => this.options.onEvent?.(event);
    await emit({ type: "upload-started" });
    try {
      const published = await publishProject(
        await this.options.client(signal),
        {
          dir: project.dir,
          composition: this.options.composition,
          aspectRatio: this.options.aspectRatio,
          idempotencyKey: this.options.idempotencyKey,
          tempDir: this.options.tempDir,
        },
        { signal, onEvent: (event) => void emit({ type: "publish", event }) },
      );
      this.uploaded = { assetId: published.assetId, aspectRatio: published.scan.aspectRatio };
      await emit({ type: "asset", assetId: published.assetId });
      return this.uploaded;
    } catch (error) {
      await emit({ type: "upload-failed", error, interrupted: Boolean(signal?.aborted) });
      throw error;
    }
  }
}

// ------------------------------------------------------------ the CLI's run of a whole batch

export interface BatchRow {
  /** The row's number in the table (the first data row is 1). */
  row: number;
  values: VariableValues;
  /** Where its video goes. */
  outputPath: string;
  /** The row's caption file inside the project (the table's `captions` column). */
  captions?: string | undefined;
  /** The row's caption style (the table's `caption_style` column); else the batch's. */
  captionStyle?: CaptionStyle | undefined;
}

export interface BatchRunOptions extends Omit<RenderSettings, "variables" | "title"> {
  client: ApiClient;
  project: { type: "dir"; dir: string } | { type: "asset_id"; assetId: string };
  rows: BatchRow[];
  /** Rows rendered at once (each is submitted, polled and downloaded on its own). */
  concurrency: number;
  /** Submit every row and return without waiting for the videos. */
  wait?: boolean;
  idempotencyKey: string;
  /** The render's title on the service, per row. */
  titleOf?: (row: BatchRow) => string;
  pollIntervalMs?: number;
  maxWaitMs?: number;
  tempDir?: string;
}

export interface BatchRowResult {
  row: number;
  status: "completed" | "queued" | "failed";
  renderId: string | undefined;
  outputPath: string | undefined;
  sizeBytes: number | undefined;
  record: RenderRecord | undefined;
  error: ClientError | Error | undefined;
}

export type BatchEvent =
  | { type: "publish"; event: PublishEvent }
  | { type: "asset"; assetId: string }
  | { type: "row-submitted"; row: number; renderId: string }
  | { type: "row-progress"; row: number; event: RenderEvent }
  | { type: "row-finished"; result: BatchRowResult };

/** Uploads once, then renders `concurrency` rows at a time; every row's end is an event. */
export async function runBatch(
  options: BatchRunOptions,
  hooks: { signal?: AbortSignal; onEvent?: (event: BatchEvent) => void } = {},
): Promise<{ assetId: string; results: BatchRowResult[] }> {
  const { signal } = hooks;
  const emit = (event: BatchEvent) => hooks.onEvent?.(event);
  const {
    client,
    project,
    rows,
    concurrency,
    wait,
    idempotencyKey,
    titleOf,
    pollIntervalMs,
    maxWaitMs,
    tempDir,
    ...settings
  } = options;
  checkSettings(options);
  checkIdempotencyKey(idempotencyKey);
  // The longest row key must fit too, before anything is uploaded.
  batchRowKey(idempotencyKey, Math.max(0, ...rows.map((r) => r.row)));

  const runner = new BatchRunner({
    client: async () => client,
    project,
    composition: settings.composition,
    aspectRatio: settings.aspectRatio,
    idempotencyKey,
    tempDir,
    signal,
    onEvent: (event) => {
      if (event.type === "publish") emit(event);
    },
  });
  const asset = await runner.asset();
  emit({ type: "asset", assetId: asset.assetId });

  const renderRow = async (row: BatchRow): Promise<BatchRowResult> => {
    let renderId: string | undefined;
    try {
      const result = await runner.renderRow(
        {
          row: row.row,
          settings: {
            ...settings,
            aspectRatio: asset.aspectRatio,
            variables: row.values,
            title: titleOf?.(row),
            ...(row.captions
              ? {
                  captions: {
                    style: row.captionStyle ?? settings.captions?.style ?? "clean",
                    ...(settings.captions?.look ? { look: settings.captions.look } : {}),
                    ...(settings.captions?.soft_track ? { soft_track: true } : {}),
                    file: row.captions,
                  },
                }
              : row.captionStyle && settings.captions
                ? { captions: { ...settings.captions, style: row.captionStyle } }
                : {}),
          },
          output: row.outputPath,
          assetId: asset.assetId,
          wait: wait ?? true,
          pollIntervalMs,
          maxWaitMs,
        },
        {
          client,
          signal,
          onEvent: (event) => {
            if (event.type === "state" && event.state.renderId && !renderId) {
              renderId = event.state.renderId;
              emit({ type: "row-submitted", row: row.row, renderId });
            }
            emit({ type: "row-progress", row: row.row, event });
          },
        },
      );
      return {
        row: row.row,
        status: wait === false ? "queued" : "completed",
        renderId: result.renderId,
        outputPath: result.outputPath,
        sizeBytes: result.sizeBytes,
        record: result.record,
        error: undefined,
      };
    } catch (error) {
      if (signal?.aborted) throw error;
      return {
        row: row.row,
        status: "failed",
        renderId,
        outputPath: undefined,
        sizeBytes: undefined,
        record: undefined,
        error: error instanceof Error ? error : new Error(String(error)),
      };
    }
  };
  const results: BatchRowResult[] = [];
  const queue = [...rows];
  const worker = async () => {
    for (let row = queue.shift(); row; row = queue.shift()) {
      if (signal?.aborted) return;
      const result = await renderRow(row);
      results.push(result);
      emit({ type: "row-finished", result });
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(concurrency, queue.length)) });
  await Promise.all(workers.map(worker));
  if (signal?.aborted) throw interruptedError();
  return { assetId: asset.assetId, results: results.sort((a, b) => a.row - b.row) };
}
