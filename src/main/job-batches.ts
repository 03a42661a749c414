// A batch's project upload: one upload per batch, made by whichever row needs the asset first
// (the others wait for it, and a row's own cancel stops only its wait), under the batch's key so
// a retry or a restart does not upload twice; and the one notification a batch gets when its
// last row ends. Used by JobManager (job-manager.ts).
import type { JobNotification } from "../shared/ipc";
import { interruptedError } from "../core/errors";
import { publishProject } from "../core/publish";
import { appError, toIpcError } from "./ipc-errors";
import type { JobServiceAccess } from "./job-records";
import type { BatchRecord, JobRecord, JobStore } from "./job-store";

export class BatchUploads {
  private readonly uploads = new Map<string, Promise<string>>();

  constructor(
    private readonly store: JobStore,
    private readonly service: JobServiceAccess,
    private readonly tempDir: string | undefined,
    /** Aborted when the app quits: stops every batch upload. */
    private readonly lifetime: AbortSignal,
  ) {}

  /** The asset of a row's batch: uploaded once, by whichever row needs it first. */
  async assetFor(job: JobRecord, signal: AbortSignal): Promise<string> {
    if (job.source.type !== "batch") throw appError("internal_error", "Not a batch row.");
    const batchId = job.source.batchId;
    const batch = this.store.requireBatch(batchId);
    if (batch.assetId) return batch.assetId;
    let upload = this.uploads.get(batchId);
    if (!upload) {
      upload = this.upload(batch).finally(() => this.uploads.delete(batchId));
      this.uploads.set(batchId, upload);
    }
    return new Promise<string>((resolveAsset, reject) => {
      const onAbort = () => reject(interruptedError());
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      upload.then(resolveAsset, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

  private async upload(batch: BatchRecord): Promise<string> {
    const signal = this.lifetime;
    const setUpload = (upload: BatchRecord["upload"], progressOnly = false) =>
      this.store.changeBatch(batch, { upload }, { progressOnly });
    await setUpload({ stage: "zip", progress: 0, error: undefined });
    try {
      const client = await this.service.client(signal);
      const published = await publishProject(
        client,
        {
          dir: batch.dir,
          composition: batch.composition,
          aspectRatio: batch.settings.aspectRatio,
          idempotencyKey: batch.uploadKey,
          tempDir: this.tempDir,
        },
        {
          signal,
          onEvent: (event) => {
            if (event.type === "stage" && event.stage === "upload")
              void setUpload({ stage: "upload", progress: 0, error: undefined });
            if (event.type === "upload-progress")
              void setUpload(
                {
                  stage: "upload",
                  progress: event.totalBytes ? event.bytes / event.totalBytes : 0,
                  error: undefined,
                },
                true,
              );
          },
        },
      );
      await this.store.changeBatch(batch, {
        assetId: published.assetId,
        upload: { stage: "done", progress: 1, error: undefined },
      });
      return published.assetId;
    } catch (error) {
      await setUpload(
        signal.aborted
          ? { stage: "waiting", progress: 0, error: undefined }
          : { stage: "failed", progress: 0, error: toIpcError(error) },
      );
      throw error;
    }
  }
}

/** The one notification a batch gets, once its last row has ended (undefined before). */
export function batchEndedNotification(
  store: JobStore,
  batchId: string,
  jobId: string,
): JobNotification | undefined {
  const rows = store.rowsOf(batchId);
  if (rows.some((row) => row.status === "waiting" || row.status === "running")) return undefined;
  const batch = store.requireBatch(batchId);
  const done = rows.filter((row) => row.status === "completed").length;
  const failed = rows.filter((row) => row.status === "failed").map((row) => row.batch!.row);
  return {
    jobId,
    title: failed.length === 0 ? "Batch finished" : "Batch finished with failures",
    body:
      `${batch.title}: ${done} of ${rows.length} videos saved to ${batch.outputDir}` +
      (failed.length > 0 ? `; failed: row ${failed.join(", row ")}.` : "."),
    outcome: failed.length === 0 ? "completed" : "failed",
  };
}
