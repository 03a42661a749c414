// The render queue (SPEC.md section 7): what the app's screens ask of it (submit, cancel, retry,
// download again, remove) and the scheduler that runs at most `concurrency` jobs at once. Its
// state lives in a JobStore (job-store.ts: jobs.json, written on every stage change, holding the
// idempotency key, asset id, render id and output path a job needs to pick up again after the app
// quits or is killed); one job's steps are job-steps.ts. A job with a render id is re-attached
// (poll, then download); one without starts its upload again under the same key. A step that
// fails because the service went away (network error, 5xx — e.g. the embedded service
// restarting) waits for the service and is tried again.
import { randomUUID } from "node:crypto";
import { realpath } from "node:fs/promises";
import { basename, resolve, sep } from "node:path";
import type { RenderRecord } from "../shared/api";
import type { IpcError, JobNotification, JobRenderSettings, JobView } from "../shared/ipc";
import { fromRenderOptions } from "../shared/render-options";
import { isTransient, type ApiClient } from "../core/api-client";
import { backoffDelay, sleep } from "../core/backoff";
import { newIdempotencyKey } from "../core/render-job";
import { appError, toIpcError } from "./ipc-errors";
import { runJobSteps } from "./job-steps";
import { JobStore, viewOf, type JobRecord } from "./job-store";

export interface JobServiceAccess {
  client(signal?: AbortSignal): Promise<ApiClient>;
  waitUntilAvailable(signal?: AbortSignal): Promise<void>;
}

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

export interface SubmitJobInput {
  dir: string;
  composition?: string | undefined;
  settings: JobRenderSettings;
  outputDir?: string | undefined;
}

/** A render of a project already uploaded (e.g. History's "Render again" with new variables). */
export interface SubmitAssetJobInput {
  assetId: string;
  composition: string;
  settings: JobRenderSettings;
  outputDir?: string | undefined;
}

/** The app's own idempotency keys, told apart from the CLI's in the service's records. */
function desktopIdempotencyKey(): string {
  return newIdempotencyKey("svc-desktop");
}

export class JobManager {
  private readonly running = new Map<
    string,
    { controller: AbortController; done: Promise<void> }
  >();
  private closing = false;
  private started = false;

  private constructor(
    private readonly options: JobManagerOptions,
    private readonly store: JobStore,
    private readonly now: () => number,
  ) {}

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
      title: input.settings.title || input.assetId,
      stage: "queued",
      assetId: input.assetId,
    };
    return this.add(job);
  }

  /**
   * The video of a completed job, for opening it: it must still exist and (symlinks followed)
   * lie inside the folder the job downloads to, so a tampered queue file cannot open anything else.
   */
  async outputFile(jobId: string): Promise<string> {
    const job = this.store.require(jobId);
    if (job.status !== "completed" || !job.outputPath) {
      throw appError("job_not_completed", "Only a finished render can be opened.");
    }
    const file = await realpath(job.outputPath).catch(() => undefined);
    if (!file) {
      throw appError(
        "file_missing",
        `${job.outputPath} no longer exists.`,
        "Download it again from the queue.",
      );
    }
    const folder = await realpath(job.outputDir).catch(() => resolve(job.outputDir));
    if (!file.startsWith(folder + sep)) {
      throw appError(
        "path_outside_output",
        `${file} is not in the job's output folder ${folder}.`,
        "Download the render again from History.",
      );
    }
    return file;
  }

  private newJob(
    source: JobView["source"],
    settings: JobRenderSettings,
    outputDir: string | undefined,
  ): JobRecord {
    return {
      id: `job_${randomUUID()}`,
      revision: 0,
      title: "render",
      status: "waiting",
      stage: "waiting",
      progress: 0,
      bytes: undefined,
      etaSeconds: undefined,
      createdAt: this.now(),
      startedAt: undefined,
      finishedAt: undefined,
      source,
      settings,
      assetId: undefined,
      renderId: undefined,
      outputPath: undefined,
      sizeBytes: undefined,
      error: undefined,
      outputDir: resolve(outputDir ?? this.options.downloadsDir()),
      idempotencyKey: desktopIdempotencyKey(),
      renderFailed: false,
    };
  }

  /** Downloads a render from the service's history as a job of its own (fresh signed URL). */
  async downloadFromHistory(record: RenderRecord, outputDir?: string): Promise<JobView> {
    const settings = fromRenderOptions(record);
    const job: JobRecord = {
      ...this.newJob({ type: "render", renderId: record.render_id }, settings, outputDir),
      title: record.title ?? record.render_id,
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
    return viewOf(job);
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
    // A render that is still valid on the service is picked up again; one that failed is redone
    // under a new key (the old key would replay the failed render).
    const reattach = job.renderId !== undefined && !job.renderFailed;
    await this.store.change(job, {
      status: "waiting",
      stage: reattach || job.source.type === "asset" ? "queued" : "waiting",
      progress: 0,
      bytes: undefined,
      etaSeconds: undefined,
      error: undefined,
      finishedAt: undefined,
      ...(reattach
        ? {}
        : {
            idempotencyKey: desktopIdempotencyKey(),
            assetId: job.source.type === "dir" ? undefined : job.assetId,
            renderId: job.source.type === "render" ? job.renderId : undefined,
            outputPath: undefined,
            renderFailed: false,
          }),
    });
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
    const runs = [...this.running.values()];
    for (const run of runs) run.controller.abort();
    await Promise.all(runs.map((run) => run.done));
    await this.store.flush();
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
        });
        await this.store.change(job, {
          status: "completed",
          progress: 1,
          etaSeconds: undefined,
          error: undefined,
          finishedAt: this.now(),
        });
        this.options.notify?.({
          jobId: job.id,
          title: "Render finished",
          body: `${job.title} was saved to ${job.outputPath}.`,
          outcome: "completed",
        });
        return;
      } catch (error) {
        if (!signal.aborted && isTransient(error) && attempt < attempts) {
          // The service went away (e.g. the embedded one is restarting): wait for it, try again.
          const resumed = await this.options.service
            .waitUntilAvailable(signal)
            .then(() => sleep(backoffDelay(attempt, 500, 5_000), signal))
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

  private async fail(job: JobRecord, error: IpcError): Promise<void> {
    await this.store.change(job, {
      status: "failed",
      error,
      etaSeconds: undefined,
      finishedAt: this.now(),
    });
    this.options.notify?.({
      jobId: job.id,
      title: "Render failed",
      body: `${job.title}: ${error.message}`,
      outcome: "failed",
    });
  }
}
