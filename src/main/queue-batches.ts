// The app's side of a batch's runner (core/batch.ts): one BatchRunner per batch, so the batch's
// project is uploaded once, by whichever row needs the asset first (the others wait for it, and a
// row's own cancel stops only its wait), under the batch's key so a retry or a restart does not
// upload twice. The runner's upload events become the batch record's upload stage (queue.json); and
// the one notification a batch gets when its last row ends. Used by RenderQueue (render-queue.ts).
import type { QueuedRenderNotification } from "../shared/ipc";
import { BatchRunner, type BatchUploadEvent } from "../core/index";
import { appError, toIpcError } from "./ipc-errors";
import type { QueueServiceAccess } from "./queue-records";
import type { BatchRecord, QueuedRenderRecord, QueueStore } from "./queue-store";

export class BatchRunners {
  private readonly runners = new Map<string, BatchRunner>();

  constructor(
    private readonly store: QueueStore,
    private readonly service: QueueServiceAccess,
    private readonly tempDir: string | undefined,
    /** Aborted when the app quits: stops every batch upload. */
    private readonly lifetime: AbortSignal,
  ) {}

  /** The runner of a row's batch (its upload shared by all the batch's rows). */
  runnerFor(queuedRender: QueuedRenderRecord): BatchRunner {
    if (queuedRender.source.type !== "batch") throw appError("internal_error", "Not a batch row.");
    const batch = this.store.requireBatch(queuedRender.source.batchId);
    let runner = this.runners.get(batch.id);
    if (!runner) {
      runner = new BatchRunner(
        {
          client: (signal) => this.service.client(signal),
          project: { type: "dir", dir: batch.dir },
          composition: batch.composition,
          aspectRatio: batch.settings.aspectRatio,
          idempotencyKey: batch.uploadKey,
          tempDir: this.tempDir,
          signal: this.lifetime,
          onEvent: (event) => this.record(batch, event),
        },
        batch.assetId,
      );
      this.runners.set(batch.id, runner);
    }
    return runner;
  }

  /** The batch was taken off the list: its runner goes too. */
  forget(batchId: string): void {
    this.runners.delete(batchId);
  }

  private record(batch: BatchRecord, event: BatchUploadEvent): Promise<void> | undefined {
    const setUpload = (upload: BatchRecord["upload"], progressOnly = false) =>
      this.store.changeBatch(batch, { upload }, { progressOnly });
    switch (event.type) {
      case "upload-started":
        return setUpload({ stage: "zip", progress: 0, error: undefined });
      case "publish":
        if (event.event.type === "stage" && event.event.stage === "upload")
          void setUpload({ stage: "upload", progress: 0, error: undefined });
        if (event.event.type === "upload-progress")
          void setUpload(
            {
              stage: "upload",
              progress: event.event.totalBytes ? event.event.bytes / event.event.totalBytes : 0,
              error: undefined,
            },
            true,
          );
        return undefined;
      case "asset":
        return this.store.changeBatch(batch, {
          assetId: event.assetId,
          upload: { stage: "done", progress: 1, error: undefined },
        });
      case "upload-failed":
        return setUpload(
          event.interrupted
            ? { stage: "waiting", progress: 0, error: undefined }
            : { stage: "failed", progress: 0, error: toIpcError(event.error) },
        );
    }
  }
}

/** The one notification a batch gets, once its last row has ended (undefined before). */
export function batchEndedNotification(
  store: QueueStore,
  batchId: string,
  queuedRenderId: string,
): QueuedRenderNotification | undefined {
  const rows = store.rowsOf(batchId);
  if (rows.some((row) => row.status === "waiting" || row.status === "running")) return undefined;
  const batch = store.requireBatch(batchId);
  const done = rows.filter((row) => row.status === "completed").length;
  const failed = rows.filter((row) => row.status === "failed").map((row) => row.batch!.row);
  return {
    queuedRenderId,
    title: failed.length === 0 ? "Batch finished" : "Batch finished with failures",
    body:
      `${batch.title}: ${done} of ${rows.length} videos saved to ${batch.outputDir}` +
      (failed.length > 0 ? `; failed: row ${failed.join(", row ")}.` : "."),
    outcome: failed.length === 0 ? "completed" : "failed",
  };
}
