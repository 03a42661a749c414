// The render queue's state: the queued renders and batches in memory, `queue.json` in the app data
// dir (rewritten atomically on every stage change, so a kill leaves the last stage on disk; its
// format, and the move from older apps' file, are queue-file.ts) and the listeners that mirror
// every change to the renderer. Progress-only changes reach listeners at most every 200 ms and are
// not written; stage changes go out and to disk at once. A batch is kept beside its row queued
// renders (each row is a queued render of its own), so a restart finds both.
import { existsSync } from "node:fs";
import type { BatchView, QueuedRenderOutput, QueuedRenderView } from "../shared/ipc";
import { ClientError } from "../core/index";
import { JsonFileWriter } from "../node/index";
import { readQueueFile, type QueueFile } from "./queue-file";

/** What is kept on disk for one queued render (the view minus what is computed when shown). */
export interface QueuedRenderRecord extends Omit<QueuedRenderView, "fileMissing" | "outputs"> {
  /** Every file of a render with several outputs (the view adds whether each is missing). */
  outputs: Array<Omit<QueuedRenderOutput, "missing">> | undefined;
  outputDir: string;
  /** Made with the queued render, so a restarted upload replays the same asset and render. */
  idempotencyKey: string;
  /** The render itself failed: a retry renders again instead of re-attaching. */
  renderFailed: boolean;
}

/** What is kept on disk for one batch. */
export interface BatchRecord extends BatchView {
  /** The key of the batch's one upload, so a restarted upload replays the same asset. */
  uploadKey: string;
}

const PROGRESS_EVENT_INTERVAL_MS = 200;

export class QueueStore {
  private readonly queuedRenders = new Map<string, QueuedRenderRecord>();
  private readonly batches = new Map<string, BatchRecord>();
  private readonly listeners = new Set<(queuedRender: QueuedRenderView) => void>();
  private readonly batchListeners = new Set<(batch: BatchView) => void>();
  private readonly lastEmit = new Map<string, number>();
  private readonly writer: JsonFileWriter;

  private constructor(
    file: string,
    private readonly now: () => number,
  ) {
    this.writer = new JsonFileWriter(file);
  }

  /** Loads the queue file; queued renders that were running when the app stopped wait to be resumed. */
  static async open(file: string, now: () => number): Promise<QueueStore> {
    const store = new QueueStore(file, now);
    const stored = await readQueueFile(file);
    for (const queuedRender of stored?.queuedRenders ?? []) {
      if (!queuedRender || typeof queuedRender.id !== "string") continue;
      if (queuedRender.status === "running") queuedRender.status = "waiting";
      store.queuedRenders.set(queuedRender.id, queuedRender);
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

  onUpdate(listener: (queuedRender: QueuedRenderView) => void): () => void {
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

  /** The row queued renders of a batch, by row number. */
  rowsOf(batchId: string): QueuedRenderRecord[] {
    return this.all()
      .filter((queuedRender) => queuedRender.batch?.batchId === batchId)
      .sort((a, b) => a.batch!.row - b.batch!.row);
  }

  /** Adds a batch and its row queued renders in one write. */
  async addBatch(batch: BatchRecord, rows: QueuedRenderRecord[]): Promise<void> {
    this.batches.set(batch.id, batch);
    for (const queuedRender of rows) this.queuedRenders.set(queuedRender.id, queuedRender);
    await this.save();
    this.emitBatch(batch);
    for (const queuedRender of rows) this.emit(queuedRender);
  }

  /** Removes a batch with its row queued renders. */
  async deleteBatch(batch: BatchRecord): Promise<void> {
    for (const queuedRender of this.rowsOf(batch.id)) this.queuedRenders.delete(queuedRender.id);
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
  all(): QueuedRenderRecord[] {
    return [...this.queuedRenders.values()].sort((a, b) => a.createdAt - b.createdAt);
  }

  require(queuedRenderId: string): QueuedRenderRecord {
    const queuedRender = this.queuedRenders.get(queuedRenderId);
    if (!queuedRender)
      throw new ClientError(
        "queued_render_not_found",
        `No render ${queuedRenderId} in the queue.`,
        "Refresh the queue.",
      );
    return queuedRender;
  }

  async add(queuedRender: QueuedRenderRecord): Promise<void> {
    this.queuedRenders.set(queuedRender.id, queuedRender);
    await this.save();
    this.emit(queuedRender);
  }

  async delete(queuedRender: QueuedRenderRecord): Promise<void> {
    this.queuedRenders.delete(queuedRender.id);
    await this.save();
  }

  /** Applies a change, tells listeners, and (unless progress only) writes the queue file. */
  change(
    queuedRender: QueuedRenderRecord,
    change: Partial<QueuedRenderRecord>,
    options: { progressOnly?: boolean } = {},
  ): Promise<void> {
    return this.apply(queuedRender, change, options, () => this.emit(queuedRender));
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

  private emit(queuedRender: QueuedRenderRecord): void {
    this.lastEmit.set(queuedRender.id, this.now());
    const view = viewOf(queuedRender);
    for (const listener of this.listeners) listener(view);
  }

  private emitBatch(batch: BatchRecord): void {
    this.lastEmit.set(batch.id, this.now());
    const view = batchViewOf(batch);
    for (const listener of this.batchListeners) listener(view);
  }

  private save(): Promise<void> {
    const file: QueueFile = {
      version: 2,
      queuedRenders: [...this.queuedRenders.values()],
      batches: [...this.batches.values()],
    };
    // A failed write must not stop the queued render; the next change writes the whole queue again.
    return this.writer.write(file).catch((error: unknown) => {
      console.warn(`svc desktop: cannot save the render queue: ${(error as Error).message}`);
    });
  }
}

/** What the renderer sees of a queued render: no key or folder, plus whether its video is still there. */
export function viewOf(queuedRender: QueuedRenderRecord): QueuedRenderView {
  const { outputDir: _dir, idempotencyKey: _key, renderFailed: _failed, ...view } = queuedRender;
  const completed = queuedRender.status === "completed";
  return {
    ...view,
    batch: queuedRender.batch ?? undefined,
    outputs: queuedRender.outputs?.map((output) => ({
      ...output,
      missing: completed && output.path !== undefined && !existsSync(output.path),
    })),
    fileMissing:
      completed && queuedRender.outputPath !== undefined && !existsSync(queuedRender.outputPath),
  };
}

/** What the renderer sees of a batch: no upload key. */
export function batchViewOf(batch: BatchRecord): BatchView {
  const { uploadKey: _key, ...view } = batch;
  return view;
}
