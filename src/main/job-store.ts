// The render queue's state: the jobs and batches in memory, `jobs.json` in the app data dir
// (rewritten atomically on every stage change, so a kill leaves the last stage on disk) and the
// listeners that mirror every change to the renderer. Progress-only changes reach listeners at
// most every 200 ms and are not written; stage changes go out and to disk at once. A batch is
// kept beside its row jobs (each row is a job of its own), so a restart finds both.
import { existsSync } from "node:fs";
import type { BatchView, JobOutput, JobView } from "../shared/ipc";
import { ClientError } from "../core/index";
import { JsonFileWriter, readJsonFile } from "../node/index";

/** What is kept on disk for one job (the view minus what is computed when shown). */
export interface JobRecord extends Omit<JobView, "fileMissing" | "outputs"> {
  /** Every file of a render with several outputs (the view adds whether each is missing). */
  outputs: Array<Omit<JobOutput, "missing">> | undefined;
  outputDir: string;
  /** Made with the job, so a restarted upload replays the same asset and render. */
  idempotencyKey: string;
  /** The render itself failed: a retry renders again instead of re-attaching. */
  renderFailed: boolean;
}

/** What is kept on disk for one batch. */
export interface BatchRecord extends BatchView {
  /** The key of the batch's one upload, so a restarted upload replays the same asset. */
  uploadKey: string;
}

interface JobFile {
  version: 1;
  jobs: JobRecord[];
  /** Absent in files written before batches existed. */
  batches?: BatchRecord[];
}

const PROGRESS_EVENT_INTERVAL_MS = 200;

export class JobStore {
  private readonly jobs = new Map<string, JobRecord>();
  private readonly batches = new Map<string, BatchRecord>();
  private readonly listeners = new Set<(job: JobView) => void>();
  private readonly batchListeners = new Set<(batch: BatchView) => void>();
  private readonly lastEmit = new Map<string, number>();
  private readonly writer: JsonFileWriter;

  private constructor(
    file: string,
    private readonly now: () => number,
  ) {
    this.writer = new JsonFileWriter(file);
  }

  /** Loads the queue file; jobs that were running when the app stopped wait to be resumed. */
  static async open(file: string, now: () => number): Promise<JobStore> {
    const store = new JobStore(file, now);
    const stored = (await readJsonFile(file)) as Partial<JobFile> | undefined;
    for (const job of stored?.jobs ?? []) {
      if (!job || typeof job.id !== "string") continue;
      if (job.status === "running") job.status = "waiting";
      store.jobs.set(job.id, job);
    }
    for (const batch of stored?.batches ?? []) {
      if (!batch || typeof batch.id !== "string") continue;
      // An upload cut short by the quit starts again (under the same key) when a row needs it.
      if (batch.upload.stage === "zip" || batch.upload.stage === "upload")
        batch.upload = { stage: "waiting", progress: 0, error: undefined };
      store.batches.set(batch.id, batch);
    }
    return store;
  }

  onUpdate(listener: (job: JobView) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onBatchUpdate(listener: (batch: BatchView) => void): () => void {
    this.batchListeners.add(listener);
    return () => this.batchListeners.delete(listener);
  }

  /** Oldest first. */
  allBatches(): BatchRecord[] {
    return [...this.batches.values()].sort((a, b) => a.createdAt - b.createdAt);
  }

  requireBatch(batchId: string): BatchRecord {
    const batch = this.batches.get(batchId);
    if (!batch)
      throw new ClientError(
        "batch_not_found",
        `No batch ${batchId} in the queue.`,
        "Refresh the queue.",
      );
    return batch;
  }

  /** The row jobs of a batch, by row number. */
  rowsOf(batchId: string): JobRecord[] {
    return this.all()
      .filter((job) => job.batch?.batchId === batchId)
      .sort((a, b) => a.batch!.row - b.batch!.row);
  }

  /** Adds a batch and its row jobs in one write. */
  async addBatch(batch: BatchRecord, rows: JobRecord[]): Promise<void> {
    this.batches.set(batch.id, batch);
    for (const job of rows) this.jobs.set(job.id, job);
    await this.save();
    this.emitBatch(batch);
    for (const job of rows) this.emit(job);
  }

  /** Removes a batch with its row jobs. */
  async deleteBatch(batch: BatchRecord): Promise<void> {
    for (const job of this.rowsOf(batch.id)) this.jobs.delete(job.id);
    this.batches.delete(batch.id);
    await this.save();
  }

  /** Like `change`, for a batch. */
  changeBatch(
    batch: BatchRecord,
    change: Partial<BatchRecord>,
    options: { progressOnly?: boolean } = {},
  ): Promise<void> {
    return this.apply(batch, change, options, () => this.emitBatch(batch));
  }

  /** Oldest first. */
  all(): JobRecord[] {
    return [...this.jobs.values()].sort((a, b) => a.createdAt - b.createdAt);
  }

  require(jobId: string): JobRecord {
    const job = this.jobs.get(jobId);
    if (!job)
      throw new ClientError("job_not_found", `No job ${jobId} in the queue.`, "Refresh the queue.");
    return job;
  }

  async add(job: JobRecord): Promise<void> {
    this.jobs.set(job.id, job);
    await this.save();
    this.emit(job);
  }

  async delete(job: JobRecord): Promise<void> {
    this.jobs.delete(job.id);
    await this.save();
  }

  /** Applies a change, tells listeners, and (unless progress only) writes the queue file. */
  change(
    job: JobRecord,
    change: Partial<JobRecord>,
    options: { progressOnly?: boolean } = {},
  ): Promise<void> {
    return this.apply(job, change, options, () => this.emit(job));
  }

  /** A progress-only change reaches listeners at most every 200 ms and is not written. */
  private async apply<T extends { id: string; revision: number }>(
    record: T,
    change: Partial<T>,
    options: { progressOnly?: boolean },
    emit: () => void,
  ): Promise<void> {
    Object.assign(record, change);
    record.revision++;
    if (options.progressOnly) {
      const last = this.lastEmit.get(record.id) ?? 0;
      if (this.now() - last < PROGRESS_EVENT_INTERVAL_MS) return;
    }
    emit();
    if (!options.progressOnly) await this.save();
  }

  /** Writes what is pending and waits for it. */
  async flush(): Promise<void> {
    await this.save();
    await this.writer.flush();
  }

  private emit(job: JobRecord): void {
    this.lastEmit.set(job.id, this.now());
    const view = viewOf(job);
    for (const listener of this.listeners) listener(view);
  }

  private emitBatch(batch: BatchRecord): void {
    this.lastEmit.set(batch.id, this.now());
    const view = batchViewOf(batch);
    for (const listener of this.batchListeners) listener(view);
  }

  private save(): Promise<void> {
    const file: JobFile = {
      version: 1,
      jobs: [...this.jobs.values()],
      batches: [...this.batches.values()],
    };
    // A failed write must not stop the job; the next change writes the whole queue again.
    return this.writer.write(file).catch((error: unknown) => {
      console.warn(`svc desktop: cannot save the render queue: ${(error as Error).message}`);
    });
  }
}

/** What the renderer sees of a job: no key or folder, plus whether its video is still there. */
export function viewOf(job: JobRecord): JobView {
  const { outputDir: _dir, idempotencyKey: _key, renderFailed: _failed, ...view } = job;
  const completed = job.status === "completed";
  return {
    ...view,
    batch: job.batch ?? undefined,
    outputs: job.outputs?.map((output) => ({
      ...output,
      missing: completed && output.path !== undefined && !existsSync(output.path),
    })),
    fileMissing: completed && job.outputPath !== undefined && !existsSync(job.outputPath),
  };
}

/** What the renderer sees of a batch: no upload key. */
export function batchViewOf(batch: BatchRecord): BatchView {
  const { uploadKey: _key, ...view } = batch;
  return view;
}
