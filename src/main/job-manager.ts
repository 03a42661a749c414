// The render queue (SPEC.md section 7): what the app's screens ask of it (submit, cancel, retry,
// download again, remove) and the scheduler that runs at most `concurrency` jobs at once. Its
// state lives in a JobStore (job-store.ts: jobs.json, written on every stage change, holding the
// idempotency key, asset id, render id and output path a job needs to pick up again after the app
// quits or is killed); one job's steps are job-steps.ts. A job with a render id is re-attached
// (poll, then download); one without starts its upload again under the same key. A step that
// fails because the service went away (network error, 5xx — e.g. the embedded service
// restarting) waits for the service and is tried again.
// A batch ("Render many…") is one job per row run by the same batch runner as the CLI's batches
// (core/batch.ts): the first row that runs uploads the project under the batch's own key (the
// others wait for it), then every row renders that asset under its own key (`<batch key>:row-N`),
// so neither a retry nor a restart uploads twice or renders a row twice. Rows keep the queue's
// concurrency; the batch is told once, when its last row ends (job-records.ts, job-batches.ts).
import { basename, dirname, resolve } from "node:path";
import type { RenderRecord } from "../shared/api";
import {
  CANCEL_NOT_SENT,
  type BatchView,
  type IpcError,
  type JobNotification,
  type JobRenderSettings,
  type JobView,
} from "../shared/ipc";
import { fromRenderOptions } from "../shared/render-options";
import { isTransient } from "../core/index";
import { clientRetryDelay, sleep } from "../core/index";
import { ClientError } from "../core/index";
import { appError, toIpcError } from "./ipc-errors";
import { BatchRunners, batchEndedNotification } from "./job-batches";
import {
  batchRecords,
  existingFolder,
  compositionName,
  newBatchFolder,
  newJobRecord,
  openableOutput,
  retryChanges,
  type JobServiceAccess,
  type SubmitAssetJobInput,
  type SubmitBatchInput,
  type SubmitJobInput,
} from "./job-records";
import { runJobSteps } from "./job-steps";
import { batchViewOf, JobStore, viewOf, type JobRecord } from "./job-store";

export type { JobServiceAccess, SubmitAssetJobInput, SubmitBatchInput, SubmitJobInput };

export interface JobManagerOptions {
  file: string;
  service: JobServiceAccess;
  concurrency: () => number;
  downloadsDir: () => string;
  /** How often a rendering job asks for its status (default 2 s: the queue shows live progress). */
  pollIntervalMs?: number;
  /** Attempts of a step that failed because the service was unreachable (default 6). */
  transientAttempts?: number;
  tempDir?: string;
  now?: () => number;
  notify?: (notification: JobNotification) => void;
}

export class JobManager {
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
    private readonly options: JobManagerOptions,
    private readonly store: JobStore,
    private readonly now: () => number,
  ) {
    this.batchRunners = new BatchRunners(
      store,
      options.service,
      options.tempDir,
      this.lifetime.signal,
    );
  }

  /** Loads the queue; jobs that were running when the app stopped wait to be resumed. */
  static async open(options: JobManagerOptions): Promise<JobManager> {
    const now = options.now ?? Date.now;
    return new JobManager(options, await JobStore.open(options.file, now), now);
  }

  /** Starts running waiting jobs (call after listeners are attached). */
  start(): void {
    this.started = true;
    this.pump();
  }

  onUpdate(listener: (job: JobView) => void): () => void {
    return this.store.onUpdate(listener);
  }

  onBatchUpdate(listener: (batch: BatchView) => void): () => void {
    return this.store.onBatchUpdate(listener);
  }

  listBatches(): BatchView[] {
    return this.store.allBatches().map(batchViewOf);
  }

  /** Queues a batch: its own folder under the downloads folder, then one job per row. */
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
    for (const job of this.store.rowsOf(batchId)) {
      if (job.status === "failed" || job.status === "cancelled") await this.retry(job.id);
    }
    return batchViewOf(batch);
  }

  /** Cancels the rows that have not finished; videos already saved stay. */
  async cancelBatch(batchId: string): Promise<BatchView> {
    const batch = this.store.requireBatch(batchId);
    const rows = this.store.rowsOf(batchId);
    // Waiting rows first, so none starts in the slot a cancelled running row frees.
    for (const job of rows)
      if (job.status === "waiting" && !this.running.has(job.id)) await this.cancel(job.id);
    await Promise.all(
      rows.filter((job) => this.running.has(job.id)).map((job) => this.cancel(job.id)),
    );
    return batchViewOf(batch);
  }

  /** Takes a batch and its rows off the list (running rows are stopped); files stay. */
  async removeBatch(batchId: string): Promise<void> {
    const batch = this.store.requireBatch(batchId);
    const rows = this.store.rowsOf(batchId);
    for (const job of rows) if (job.status === "waiting") job.status = "cancelled";
    await Promise.all(
      rows
        .map((job) => this.running.get(job.id))
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

  list(): JobView[] {
    return this.store.all().map(viewOf);
  }

  get(jobId: string): JobView {
    return viewOf(this.store.require(jobId));
  }

  async submit(input: SubmitJobInput): Promise<JobView> {
    const dir = input.dir;
    const job: JobRecord = {
      ...this.newJob(
        { type: "dir", dir, composition: input.composition ?? "index.html" },
        input.settings,
        input.outputDir,
      ),
      title: input.settings.title || basename(dir) || "render",
    };
    return this.add(job);
  }

  /** Renders an uploaded project again: nothing is zipped or uploaded, the job starts at queued. */
  async submitFromAsset(input: SubmitAssetJobInput): Promise<JobView> {
    const job: JobRecord = {
      ...this.newJob(
        { type: "asset", assetId: input.assetId, composition: input.composition },
        input.settings,
        input.outputDir,
      ),
      title: input.settings.title || compositionName(input.composition),
      stage: "queued",
      assetId: input.assetId,
    };
    return this.add(job);
  }

  /**
   * The video of a completed job, for opening it: it must still exist and (symlinks followed)
   * lie inside the folder the job downloads to, so a tampered queue file cannot open anything else.
   */
  async outputFile(jobId: string, output = 0): Promise<string> {
    return openableOutput(this.store.require(jobId), output);
  }

  /** Downloads a render from the service's history as a job of its own (fresh signed URL). */
  async downloadFromHistory(record: RenderRecord, outputDir?: string): Promise<JobView> {
    const settings = fromRenderOptions(record);
    const job: JobRecord = {
      ...this.newJob({ type: "render", renderId: record.render_id }, settings, outputDir),
      title: record.title ?? compositionName(record.composition),
      stage: "download",
      renderId: record.render_id,
    };
    return this.add(job);
  }

  async cancel(jobId: string): Promise<JobView> {
    const job = this.store.require(jobId);
    if (job.status === "completed") {
      throw appError(
        "job_finished",
        "This job has already finished.",
        "Remove it from the queue instead.",
      );
    }
    const run = this.running.get(jobId);
    if (run) {
      run.controller.abort();
      await run.done;
    } else if (job.status === "waiting") {
      await this.store.change(job, {
        status: "cancelled",
        etaSeconds: undefined,
        finishedAt: this.now(),
      });
    }
    await this.cancelOnService(job);
    return viewOf(job);
  }

  /**
   * Stopping to watch is not enough: a render submitted for this job is cancelled on the service
   * too, so it stops there and is not charged. One that completed meanwhile (409) is kept — it
   * was charged and can be downloaded again. A Retry then renders anew (the old render failed).
   */
  private async cancelOnService(job: JobRecord): Promise<void> {
    if (job.status !== "cancelled" || !job.renderId || job.renderFailed) return;
    if (job.source.type === "render" || job.stage === "download") return;
    try {
      const client = await this.options.service.client();
      await client.cancelRender(job.renderId);
      await this.store.change(job, { renderFailed: true });
      if (job.error?.code === CANCEL_NOT_SENT) await this.store.change(job, { error: undefined });
    } catch (error) {
      if (error instanceof ClientError && error.code === "svc_render_finished") return;
      await this.store.change(job, {
        error: {
          code: CANCEL_NOT_SENT,
          message: `The render may still be running on the service: it could not be told to stop (${toIpcError(error).message}).`,
          hint: "Check that the service is running (Settings), then press Stop on the service.",
        },
      });
    }
  }

  /** Runs a failed or cancelled job again with the same settings. */
  async retry(jobId: string): Promise<JobView> {
    const job = this.store.require(jobId);
    if (job.status !== "failed" && job.status !== "cancelled") {
      throw appError(
        "job_not_retryable",
        `This job is ${job.status}; only failed or cancelled jobs can be retried.`,
      );
    }
    await this.store.change(job, retryChanges(job));
    this.pump();
    return viewOf(job);
  }

  /** Downloads a completed job's video again (after the file was deleted or moved). */
  async redownload(jobId: string): Promise<JobView> {
    const job = this.store.require(jobId);
    if (job.status !== "completed" || !job.renderId) {
      throw appError("job_not_completed", "Only a completed render can be downloaded again.");
    }
    await this.store.change(job, {
      status: "waiting",
      stage: "download",
      progress: 0,
      bytes: undefined,
      etaSeconds: undefined,
      finishedAt: undefined,
    });
    this.pump();
    return viewOf(job);
  }

  async remove(jobId: string): Promise<void> {
    const job = this.store.require(jobId);
    const run = this.running.get(jobId);
    if (run) {
      run.controller.abort();
      await run.done;
    }
    await this.store.delete(job);
  }

  /** Stops running jobs without giving up on them: they resume on the next start. */
  async close(): Promise<void> {
    this.closing = true;
    this.lifetime.abort();
    const runs = [...this.running.values()];
    for (const run of runs) run.controller.abort();
    await Promise.all(runs.map((run) => run.done));
    await this.store.flush();
  }

  private newJob(
    source: JobView["source"],
    settings: JobRenderSettings,
    outputDir: string | undefined,
  ): JobRecord {
    return newJobRecord(
      source,
      settings,
      resolve(outputDir ?? this.options.downloadsDir()),
      this.now(),
    );
  }

  // ------------------------------------------------------------ running

  private async add(job: JobRecord): Promise<JobView> {
    await this.store.add(job);
    const queued = viewOf(job);
    this.pump();
    return queued;
  }

  private pump(): void {
    if (!this.started || this.closing) return;
    const waiting = this.store
      .all()
      .filter((job) => job.status === "waiting" && !this.running.has(job.id));
    for (const job of waiting) {
      if (this.running.size >= Math.max(1, this.options.concurrency())) return;
      const controller = new AbortController();
      const done = this.run(job, controller.signal).finally(() => {
        this.running.delete(job.id);
        this.pump();
      });
      this.running.set(job.id, { controller, done });
    }
  }

  private async run(job: JobRecord, signal: AbortSignal): Promise<void> {
    await this.store.change(job, { status: "running", startedAt: job.startedAt ?? this.now() });
    const attempts = this.options.transientAttempts ?? 6;
    for (let attempt = 1; ; attempt++) {
      try {
        await runJobSteps(job, {
          client: await this.options.service.client(signal),
          store: this.store,
          signal,
          now: this.now,
          pollIntervalMs: this.options.pollIntervalMs ?? 2_000,
          tempDir: this.options.tempDir,
          batchRunner: (row) => this.batchRunners.runnerFor(row),
        });
        await this.store.change(job, {
          status: "completed",
          progress: 1,
          etaSeconds: undefined,
          error: undefined,
          finishedAt: this.now(),
        });
        if (job.batch) this.rowEnded(job.batch.batchId, job.id);
        else
          this.options.notify?.({
            jobId: job.id,
            title: "Render finished",
            body: job.outputs
              ? `${job.title}: ${job.outputs.length} files were saved to ${dirname(job.outputPath ?? job.outputDir)}.`
              : `${job.title} was saved to ${job.outputPath}.`,
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
            await this.store.change(job, { status: "waiting", etaSeconds: undefined });
          else
            await this.store.change(job, {
              status: "cancelled",
              etaSeconds: undefined,
              finishedAt: this.now(),
            });
          return;
        }
        await this.fail(job, toIpcError(error));
        return;
      }
    }
  }

  private rowEnded(batchId: string, jobId: string): void {
    const notification = batchEndedNotification(this.store, batchId, jobId);
    if (notification) this.options.notify?.(notification);
  }

  private async fail(job: JobRecord, error: IpcError): Promise<void> {
    await this.store.change(job, {
      status: "failed",
      error,
      etaSeconds: undefined,
      finishedAt: this.now(),
    });
    if (job.batch) this.rowEnded(job.batch.batchId, job.id);
    else
      this.options.notify?.({
        jobId: job.id,
        title: "Render failed",
        body: `${job.title}: ${error.message}`,
        outcome: "failed",
      });
  }
}
