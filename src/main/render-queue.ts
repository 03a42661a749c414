// The render queue (SPEC.md section 7): what the app's screens ask of it (submit, cancel, retry,
// download again, remove) and the scheduler that runs at most `concurrency` queued renders at once.
// Its state lives in a QueueStore (queue-store.ts: queue.json, written on every stage change,
// holding the idempotency key, asset id, render id and output path a queued render needs to pick up
// again after the app quits or is killed); one queued render's steps are queued-render-steps.ts. A
// queued render with a render id is re-attached (poll, then download); one without starts its
// upload again under the same key. A step that fails because the service went away (network error,
// 5xx — e.g. the embedded service restarting) waits for the service and is tried again. A batch
// ("Render many…") is one queued render per row run by the same batch runner as the CLI's batches
// (core/batch.ts): the first row that runs uploads the project under the batch's own key (the
// others wait for it), then every row renders that asset under its own key (`<batch key>:row-N`),
// so neither a retry nor a restart uploads twice or renders a row twice. Rows keep the queue's
// concurrency; the batch is told once, when its last row ends (queue-records.ts, queue-batches.ts).
import { basename, dirname, resolve } from "node:path";
import type { RenderRecord } from "../shared/api";
import {
  CANCEL_NOT_SENT,
  type BatchView,
  type IpcError,
  type QueuedRenderNotification,
  type QueuedRenderSettings,
  type QueuedRenderView,
} from "../shared/ipc";
import { fromRenderOptions } from "../shared/render-options";
import { isTransient } from "../core/index";
import { clientRetryDelay, sleep } from "../core/index";
import { ClientError } from "../core/index";
import { appError, toIpcError } from "./ipc-errors";
import { BatchRunners, batchEndedNotification } from "./queue-batches";
import {
  batchRecords,
  existingFolder,
  compositionName,
  newBatchFolder,
  newQueuedRenderRecord,
  openableOutput,
  retryChanges,
  type QueueServiceAccess,
  type SubmitAssetQueuedRenderInput,
  type SubmitBatchInput,
  type SubmitQueuedRenderInput,
} from "./queue-records";
import { runQueuedRenderSteps } from "./queued-render-steps";
import { batchViewOf, QueueStore, viewOf, type QueuedRenderRecord } from "./queue-store";

export type {
  QueueServiceAccess,
  SubmitAssetQueuedRenderInput,
  SubmitBatchInput,
  SubmitQueuedRenderInput,
};

export interface RenderQueueOptions {
  file: string;
  service: QueueServiceAccess;
  concurrency: () => number;
  downloadsDir: () => string;
  /** How often a rendering queued render asks for its status (default 2 s: the queue shows live progress). */
  pollIntervalMs?: number;
  /** Attempts of a step that failed because the service was unreachable (default 6). */
  transientAttempts?: number;
  tempDir?: string;
  now?: () => number;
  notify?: (notification: QueuedRenderNotification) => void;
}

export class RenderQueue {
  private readonly running = new Map<
    string,
    { controller: AbortController; done: Promise<void> }
  >();
  private closing = false;
  private started = false;
  /** Stops batch uploads when the app quits (a row's own cancel does not stop its batch's). */
  private readonly lifetime = new AbortController();
  private readonly batchRunners: BatchRunners;

  private constructor(
    private readonly options: RenderQueueOptions,
    private readonly store: QueueStore,
    private readonly now: () => number,
  ) {
    this.batchRunners = new BatchRunners(
      store,
      options.service,
      options.tempDir,
      this.lifetime.signal,
    );
  }

  /** Loads the queue; queued renders that were running when the app stopped wait to be resumed. */
  static async open(options: RenderQueueOptions): Promise<RenderQueue> {
    const now = options.now ?? Date.now;
    return new RenderQueue(options, await QueueStore.open(options.file, now), now);
  }

  /** Starts running waiting queued renders (call after listeners are attached). */
  start(): void {
    this.started = true;
    this.pump();
  }

  onUpdate(listener: (queuedRender: QueuedRenderView) => void): () => void {
    return this.store.onUpdate(listener);
  }

  onBatchUpdate(listener: (batch: BatchView) => void): () => void {
    return this.store.onBatchUpdate(listener);
  }

  listBatches(): BatchView[] {
    return this.store.allBatches().map(batchViewOf);
  }

  /** Queues a batch: its own folder under the downloads folder, then one queued render per row. */
  async submitBatch(input: SubmitBatchInput): Promise<BatchView> {
    const outputDir = await newBatchFolder(
      resolve(this.options.downloadsDir()),
      input.title,
      this.now(),
    );
    const { batch, rows } = batchRecords(input, outputDir, this.now());
    await this.store.addBatch(batch, rows);
    this.pump();
    return batchViewOf(batch);
  }

  /** Runs the batch's failed and cancelled rows again (a row that rendered is not rendered again). */
  async retryFailedRows(batchId: string): Promise<BatchView> {
    const batch = this.store.requireBatch(batchId);
    if (batch.upload.stage === "failed")
      await this.store.changeBatch(batch, {
        upload: { stage: "waiting", progress: 0, error: undefined },
      });
    for (const queuedRender of this.store.rowsOf(batchId)) {
      if (queuedRender.status === "failed" || queuedRender.status === "cancelled")
        await this.retry(queuedRender.id);
    }
    return batchViewOf(batch);
  }

  /** Cancels the rows that have not finished; videos already saved stay. */
  async cancelBatch(batchId: string): Promise<BatchView> {
    const batch = this.store.requireBatch(batchId);
    const rows = this.store.rowsOf(batchId);
    // Waiting rows first, so none starts in the slot a cancelled running row frees.
    for (const queuedRender of rows)
      if (queuedRender.status === "waiting" && !this.running.has(queuedRender.id))
        await this.cancel(queuedRender.id);
    await Promise.all(
      rows
        .filter((queuedRender) => this.running.has(queuedRender.id))
        .map((queuedRender) => this.cancel(queuedRender.id)),
    );
    return batchViewOf(batch);
  }

  /** Takes a batch and its rows off the list (running rows are stopped); files stay. */
  async removeBatch(batchId: string): Promise<void> {
    const batch = this.store.requireBatch(batchId);
    const rows = this.store.rowsOf(batchId);
    for (const queuedRender of rows)
      if (queuedRender.status === "waiting") queuedRender.status = "cancelled";
    await Promise.all(
      rows
        .map((queuedRender) => this.running.get(queuedRender.id))
        .map((run) => {
          run?.controller.abort();
          return run?.done;
        }),
    );
    await this.store.deleteBatch(batch);
    this.batchRunners.forget(batch.id);
  }

  /** The batch's folder, for "Open folder" (it must still exist). */
  async batchFolder(batchId: string): Promise<string> {
    return existingFolder(this.store.requireBatch(batchId));
  }

  list(): QueuedRenderView[] {
    return this.store.all().map(viewOf);
  }

  get(queuedRenderId: string): QueuedRenderView {
    return viewOf(this.store.require(queuedRenderId));
  }

  async submit(input: SubmitQueuedRenderInput): Promise<QueuedRenderView> {
    const dir = input.dir;
    const queuedRender: QueuedRenderRecord = {
      ...this.newQueuedRender(
        { type: "dir", dir, composition: input.composition ?? "index.html" },
        input.settings,
        input.outputDir,
      ),
      title: input.settings.title || basename(dir) || "render",
    };
    return this.add(queuedRender);
  }

  /** Renders an uploaded project again: nothing is zipped or uploaded, the queued render starts at queued. */
  async submitFromAsset(input: SubmitAssetQueuedRenderInput): Promise<QueuedRenderView> {
    const queuedRender: QueuedRenderRecord = {
      ...this.newQueuedRender(
        { type: "asset", assetId: input.assetId, composition: input.composition },
        input.settings,
        input.outputDir,
      ),
      title: input.settings.title || compositionName(input.composition),
      stage: "queued",
      assetId: input.assetId,
    };
    return this.add(queuedRender);
  }

  /**
   * The video of a completed queued render, for opening it: it must still exist and (symlinks
   * followed) lie inside the folder the queued render downloads to, so a tampered queue file cannot
   * open anything else.
   */
  async outputFile(queuedRenderId: string, output = 0): Promise<string> {
    return openableOutput(this.store.require(queuedRenderId), output);
  }

  /** Downloads a render from the service's history as a queued render of its own (fresh signed URL). */
  async downloadFromHistory(record: RenderRecord, outputDir?: string): Promise<QueuedRenderView> {
    const settings = fromRenderOptions(record);
    const queuedRender: QueuedRenderRecord = {
      ...this.newQueuedRender({ type: "render", renderId: record.render_id }, settings, outputDir),
      title: record.title ?? compositionName(record.composition),
      stage: "download",
      renderId: record.render_id,
    };
    return this.add(queuedRender);
  }

  async cancel(queuedRenderId: string): Promise<QueuedRenderView> {
    const queuedRender = this.store.require(queuedRenderId);
    if (queuedRender.status === "completed") {
      throw appError(
        "queued_render_finished",
        "This render has already finished.",
        "Remove it from the queue instead.",
      );
    }
    const run = this.running.get(queuedRenderId);
    if (run) {
      run.controller.abort();
      await run.done;
    } else if (queuedRender.status === "waiting") {
      await this.store.change(queuedRender, {
        status: "cancelled",
        etaSeconds: undefined,
        finishedAt: this.now(),
      });
    }
    await this.cancelOnService(queuedRender);
    return viewOf(queuedRender);
  }

  /**
   * Stopping to watch is not enough: a render submitted for this queued render is cancelled on the
   * service too, so it stops there and is not charged. One that completed meanwhile (409) is kept
   * — it was charged and can be downloaded again. A Retry then renders anew (the old render
   * failed).
   */
  private async cancelOnService(queuedRender: QueuedRenderRecord): Promise<void> {
    if (queuedRender.status !== "cancelled" || !queuedRender.renderId || queuedRender.renderFailed)
      return;
    if (queuedRender.source.type === "render" || queuedRender.stage === "download") return;
    try {
      const client = await this.options.service.client();
      await client.cancelRender(queuedRender.renderId);
      await this.store.change(queuedRender, { renderFailed: true });
      if (queuedRender.error?.code === CANCEL_NOT_SENT)
        await this.store.change(queuedRender, { error: undefined });
    } catch (error) {
      if (error instanceof ClientError && error.code === "svc_render_finished") return;
      await this.store.change(queuedRender, {
        error: {
          code: CANCEL_NOT_SENT,
          message: `The render may still be running on the service: it could not be told to stop (${toIpcError(error).message}).`,
          hint: "Check that the service is running (Settings), then press Stop on the service.",
        },
      });
    }
  }

  /** Runs a failed or cancelled queued render again with the same settings. */
  async retry(queuedRenderId: string): Promise<QueuedRenderView> {
    const queuedRender = this.store.require(queuedRenderId);
    if (queuedRender.status !== "failed" && queuedRender.status !== "cancelled") {
      throw appError(
        "queued_render_not_retryable",
        `This render is ${queuedRender.status}; only failed or cancelled renders can be retried.`,
      );
    }
    await this.store.change(queuedRender, retryChanges(queuedRender));
    this.pump();
    return viewOf(queuedRender);
  }

  /** Downloads a completed queued render's video again (after the file was deleted or moved). */
  async redownload(queuedRenderId: string): Promise<QueuedRenderView> {
    const queuedRender = this.store.require(queuedRenderId);
    if (queuedRender.status !== "completed" || !queuedRender.renderId) {
      throw appError(
        "queued_render_not_completed",
        "Only a completed render can be downloaded again.",
      );
    }
    await this.store.change(queuedRender, {
      status: "waiting",
      stage: "download",
      progress: 0,
      bytes: undefined,
      etaSeconds: undefined,
      finishedAt: undefined,
    });
    this.pump();
    return viewOf(queuedRender);
  }

  async remove(queuedRenderId: string): Promise<void> {
    const queuedRender = this.store.require(queuedRenderId);
    const run = this.running.get(queuedRenderId);
    if (run) {
      run.controller.abort();
      await run.done;
    }
    await this.store.delete(queuedRender);
  }

  /** Stops running queued renders without giving up on them: they resume on the next start. */
  async close(): Promise<void> {
    this.closing = true;
    this.lifetime.abort();
    const runs = [...this.running.values()];
    for (const run of runs) run.controller.abort();
    await Promise.all(runs.map((run) => run.done));
    await this.store.flush();
  }

  private newQueuedRender(
    source: QueuedRenderView["source"],
    settings: QueuedRenderSettings,
    outputDir: string | undefined,
  ): QueuedRenderRecord {
    return newQueuedRenderRecord(
      source,
      settings,
      resolve(outputDir ?? this.options.downloadsDir()),
      this.now(),
    );
  }

  // ------------------------------------------------------------ running

  private async add(queuedRender: QueuedRenderRecord): Promise<QueuedRenderView> {
    await this.store.add(queuedRender);
    const queued = viewOf(queuedRender);
    this.pump();
    return queued;
  }

  private pump(): void {
    if (!this.started || this.closing) return;
    const waiting = this.store
      .all()
      .filter(
        (queuedRender) => queuedRender.status === "waiting" && !this.running.has(queuedRender.id),
      );
    for (const queuedRender of waiting) {
      if (this.running.size >= Math.max(1, this.options.concurrency())) return;
      const controller = new AbortController();
      const done = this.run(queuedRender, controller.signal).finally(() => {
        this.running.delete(queuedRender.id);
        this.pump();
      });
      this.running.set(queuedRender.id, { controller, done });
    }
  }

  private async run(queuedRender: QueuedRenderRecord, signal: AbortSignal): Promise<void> {
    await this.store.change(queuedRender, {
      status: "running",
      startedAt: queuedRender.startedAt ?? this.now(),
    });
    const attempts = this.options.transientAttempts ?? 6;
    for (let attempt = 1; ; attempt++) {
      try {
        await runQueuedRenderSteps(queuedRender, {
          client: await this.options.service.client(signal),
          store: this.store,
          signal,
          now: this.now,
          pollIntervalMs: this.options.pollIntervalMs ?? 2_000,
          tempDir: this.options.tempDir,
          batchRunner: (row) => this.batchRunners.runnerFor(row),
        });
        await this.store.change(queuedRender, {
          status: "completed",
          progress: 1,
          etaSeconds: undefined,
          error: undefined,
          finishedAt: this.now(),
        });
        if (queuedRender.batch) this.rowEnded(queuedRender.batch.batchId, queuedRender.id);
        else
          this.options.notify?.({
            queuedRenderId: queuedRender.id,
            title: "Render finished",
            body: queuedRender.outputs
              ? `${queuedRender.title}: ${queuedRender.outputs.length} files were saved to ${dirname(queuedRender.outputPath ?? queuedRender.outputDir)}.`
              : `${queuedRender.title} was saved to ${queuedRender.outputPath}.`,
            outcome: "completed",
          });
        return;
      } catch (error) {
        if (!signal.aborted && isTransient(error) && attempt < attempts) {
          // The service went away (e.g. the embedded one is restarting): wait for it, try again.
          const resumed = await this.options.service
            .waitUntilAvailable(signal)
            .then(() => sleep(clientRetryDelay(attempt, 500, 5_000), signal))
            .then(
              () => true,
              () => false,
            );
          if (resumed) continue;
        }
        if (signal.aborted) {
          if (this.closing)
            await this.store.change(queuedRender, { status: "waiting", etaSeconds: undefined });
          else
            await this.store.change(queuedRender, {
              status: "cancelled",
              etaSeconds: undefined,
              finishedAt: this.now(),
            });
          return;
        }
        await this.fail(queuedRender, toIpcError(error));
        return;
      }
    }
  }

  private rowEnded(batchId: string, queuedRenderId: string): void {
    const notification = batchEndedNotification(this.store, batchId, queuedRenderId);
    if (notification) this.options.notify?.(notification);
  }

  private async fail(queuedRender: QueuedRenderRecord, error: IpcError): Promise<void> {
    await this.store.change(queuedRender, {
      status: "failed",
      error,
      etaSeconds: undefined,
      finishedAt: this.now(),
    });
    if (queuedRender.batch) this.rowEnded(queuedRender.batch.batchId, queuedRender.id);
    else
      this.options.notify?.({
        queuedRenderId: queuedRender.id,
        title: "Render failed",
        body: `${queuedRender.title}: ${error.message}`,
        outcome: "failed",
      });
  }
}
