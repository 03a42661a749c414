// The render queue (SPEC.md section 7): a persistent list of render jobs built on the client core.
// `jobs.json` in the app data dir is rewritten atomically on every stage change, and holds what a
// job needs to pick up again after the app quits or is killed: the idempotency key (created with
// the job, so a restarted upload replays the same asset and render instead of making new ones),
// the asset id, the render id and the output path. A job with a render id is re-attached (poll,
// then download); one without starts its upload again under the same key. At most `concurrency`
// jobs run at once. A step that fails because the service went away (network error, 5xx — e.g.
// the embedded service restarting) waits for the service and is tried again.
import { existsSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { realpath } from "node:fs/promises";
import { basename, join, resolve, sep } from "node:path";
import type { RenderRecord } from "../shared/api";
import type {
  IpcError,
  JobNotification,
  JobRenderSettings,
  JobStage,
  JobView,
} from "../shared/ipc";
import { FILE_EXTENSIONS } from "../shared/render-options";
import { isTransient, type ApiClient } from "../core/api-client";
import { backoffDelay, sleep } from "../core/backoff";
import { downloadRender } from "../core/download";
import { ClientError } from "../core/errors";
import { runRender, type RenderEvent } from "../core/pipeline";
import { pollUntilTerminal, renderFailedError } from "../core/poll";
import { newIdempotencyKey } from "../core/render-job";
import { appError, toIpcError } from "./ipc-errors";
import { JsonFileWriter, readJsonFile } from "../node/atomic-file";
import { EtaMeter } from "./job-progress";

/** What is kept on disk for one job (the view minus what is computed when shown). */
interface JobRecord extends Omit<JobView, "fileMissing"> {
  outputDir: string;
  idempotencyKey: string;
  /** The render itself failed: a retry renders again instead of re-attaching. */
  renderFailed: boolean;
}

interface JobFile {
  version: 1;
  jobs: JobRecord[];
}

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

/** Progress-only changes reach listeners at most this often; stage changes go at once. */
const PROGRESS_EVENT_INTERVAL_MS = 200;

export class JobManager {
  private readonly jobs = new Map<string, JobRecord>();
  private readonly running = new Map<
    string,
    { controller: AbortController; done: Promise<void> }
  >();
  private readonly listeners = new Set<(job: JobView) => void>();
  private readonly lastEmit = new Map<string, number>();
  private readonly writer: JsonFileWriter;
  private readonly now: () => number;
  private closing = false;
  private started = false;

  private constructor(private readonly options: JobManagerOptions) {
    this.writer = new JsonFileWriter(options.file);
    this.now = options.now ?? Date.now;
  }

  /** Loads the queue; jobs that were running when the app stopped wait to be resumed. */
  static async open(options: JobManagerOptions): Promise<JobManager> {
    const manager = new JobManager(options);
    const stored = (await readJsonFile(options.file)) as Partial<JobFile> | undefined;
    for (const job of stored?.jobs ?? []) {
      if (!job || typeof job.id !== "string") continue;
      if (job.status === "running") job.status = "waiting";
      manager.jobs.set(job.id, job);
    }
    return manager;
  }

  /** Starts running waiting jobs (call after listeners are attached). */
  start(): void {
    this.started = true;
    this.pump();
  }

  onUpdate(listener: (job: JobView) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  list(): JobView[] {
    return [...this.jobs.values()].sort((a, b) => a.createdAt - b.createdAt).map(viewOf);
  }

  get(jobId: string): JobView {
    return viewOf(this.require(jobId));
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
    const job = this.require(jobId);
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
  async downloadRender(record: RenderRecord, outputDir?: string): Promise<JobView> {
    const settings = {
      fps: record.fps,
      quality: record.quality,
      format: record.format,
      resolution: record.resolution,
      aspectRatio: record.aspect_ratio,
    };
    const job: JobRecord = {
      ...this.newJob({ type: "render", renderId: record.render_id }, settings, outputDir),
      title: record.title ?? record.render_id,
      stage: "download",
      renderId: record.render_id,
    };
    return this.add(job);
  }

  async cancel(jobId: string): Promise<JobView> {
    const job = this.require(jobId);
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
      await this.change(job, {
        status: "cancelled",
        etaSeconds: undefined,
        finishedAt: this.now(),
      });
    }
    return viewOf(job);
  }

  /** Runs a failed or cancelled job again with the same settings. */
  async retry(jobId: string): Promise<JobView> {
    const job = this.require(jobId);
    if (job.status !== "failed" && job.status !== "cancelled") {
      throw appError(
        "job_not_retryable",
        `This job is ${job.status}; only failed or cancelled jobs can be retried.`,
      );
    }
    // A render that is still valid on the service is picked up again; one that failed is redone
    // under a new key (the old key would replay the failed render).
    const reattach = job.renderId !== undefined && !job.renderFailed;
    await this.change(job, {
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
    const job = this.require(jobId);
    if (job.status !== "completed" || !job.renderId) {
      throw appError("job_not_completed", "Only a completed render can be downloaded again.");
    }
    await this.change(job, {
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
    const job = this.require(jobId);
    const run = this.running.get(jobId);
    if (run) {
      run.controller.abort();
      await run.done;
    }
    this.jobs.delete(job.id);
    await this.save();
  }

  /** Stops running jobs without giving up on them: they resume on the next start. */
  async close(): Promise<void> {
    this.closing = true;
    const runs = [...this.running.values()];
    for (const run of runs) run.controller.abort();
    await Promise.all(runs.map((run) => run.done));
    await this.save();
    await this.writer.flush();
  }

  // ------------------------------------------------------------ running

  private async add(job: JobRecord): Promise<JobView> {
    this.jobs.set(job.id, job);
    await this.save();
    this.emit(job);
    const queued = viewOf(job);
    this.pump();
    return queued;
  }

  private pump(): void {
    if (!this.started || this.closing) return;
    const waiting = [...this.jobs.values()]
      .filter((job) => job.status === "waiting" && !this.running.has(job.id))
      .sort((a, b) => a.createdAt - b.createdAt);
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
    await this.change(job, { status: "running", startedAt: job.startedAt ?? this.now() });
    const eta = new EtaMeter(this.now);
    const attempts = this.options.transientAttempts ?? 6;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.runSteps(job, signal, eta);
        await this.change(job, {
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
          if (this.closing) await this.change(job, { status: "waiting", etaSeconds: undefined });
          else
            await this.change(job, {
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

  private async runSteps(job: JobRecord, signal: AbortSignal, eta: EtaMeter): Promise<void> {
    const client = await this.options.service.client(signal);
    if (!job.renderId) {
      if (job.source.type === "render")
        throw appError("internal_error", "A download job lost its render id.");
      const result = await runRender(
        {
          client,
          project:
            job.source.type === "dir"
              ? { type: "dir", dir: job.source.dir }
              : { type: "asset_id", assetId: job.source.assetId },
          composition: job.source.composition,
          fps: job.settings.fps,
          quality: job.settings.quality,
          format: job.settings.format,
          resolution: job.settings.resolution,
          aspectRatio: job.settings.aspectRatio,
          variables: job.settings.variables,
          strictVariables: job.settings.strictVariables,
          title: job.settings.title ?? job.title,
          idempotencyKey: job.idempotencyKey,
          wait: false,
          ...(this.options.tempDir ? { tempDir: this.options.tempDir } : {}),
        },
        { signal, onEvent: (event) => this.onPipelineEvent(job, event, eta) },
      );
      if (!job.renderId)
        await this.change(job, { renderId: result.renderId, assetId: result.assetId });
    }
    const renderId = job.renderId!;
    const downloadOnly = job.stage === "download";
    if (!downloadOnly && job.stage !== "rendering") {
      await this.change(job, {
        stage: "queued",
        progress: 0,
        bytes: undefined,
        etaSeconds: undefined,
      });
    }
    const record = await pollUntilTerminal(client, renderId, {
      intervalMs: this.options.pollIntervalMs ?? 2_000,
      signal,
      onUpdate: (update) => {
        if (downloadOnly) return;
        if (update.status === "rendering") {
          void this.change(job, {
            stage: "rendering",
            progress: update.progress,
            etaSeconds: eta.estimate("rendering", update.progress),
          });
        }
      },
    });
    if (record.status === "failed") {
      job.renderFailed = true;
      throw renderFailedError(record);
    }
    const outputPath = job.outputPath ?? join(job.outputDir, outputFileName(job, record));
    await this.change(job, {
      outputPath,
      stage: "download",
      progress: 0,
      bytes: undefined,
      etaSeconds: undefined,
    });
    const downloaded = await downloadRender(client, record, outputPath, {
      signal,
      onProgress: (bytes, total) => {
        const fraction = total ? bytes / total : 0;
        void this.change(
          job,
          {
            progress: fraction,
            bytes: { done: bytes, total },
            etaSeconds: eta.estimate("download", fraction),
          },
          { progressOnly: true },
        );
      },
    });
    job.sizeBytes = downloaded.sizeBytes;
  }

  private onPipelineEvent(job: JobRecord, event: RenderEvent, eta: EtaMeter): void {
    switch (event.type) {
      case "stage": {
        const stage: JobStage =
          event.stage === "scan" || event.stage === "archive"
            ? "zip"
            : event.stage === "upload"
              ? "upload"
              : "queued";
        if (stage !== job.stage)
          void this.change(job, { stage, progress: 0, bytes: undefined, etaSeconds: undefined });
        return;
      }
      case "upload-progress": {
        const fraction = event.totalBytes ? event.bytes / event.totalBytes : 0;
        void this.change(
          job,
          {
            progress: fraction,
            bytes: { done: event.bytes, total: event.totalBytes },
            etaSeconds: eta.estimate("upload", fraction),
          },
          { progressOnly: true },
        );
        return;
      }
      case "state":
        // Written before the next step starts, so a kill after this point re-attaches.
        if (event.state.assetId !== job.assetId || event.state.renderId !== job.renderId) {
          void this.change(job, { assetId: event.state.assetId, renderId: event.state.renderId });
        }
        return;
      default:
        return;
    }
  }

  private async fail(job: JobRecord, error: IpcError): Promise<void> {
    await this.change(job, {
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

  // ------------------------------------------------------------ state

  private require(jobId: string): JobRecord {
    const job = this.jobs.get(jobId);
    if (!job)
      throw new ClientError("job_not_found", `No job ${jobId} in the queue.`, "Refresh the queue.");
    return job;
  }

  /** Applies a change, tells listeners, and (unless progress only) writes the queue file. */
  private async change(
    job: JobRecord,
    change: Partial<JobRecord>,
    options: { progressOnly?: boolean } = {},
  ): Promise<void> {
    Object.assign(job, change);
    job.revision++;
    if (options.progressOnly) {
      const last = this.lastEmit.get(job.id) ?? 0;
      if (this.now() - last < PROGRESS_EVENT_INTERVAL_MS) return;
    }
    this.emit(job);
    if (!options.progressOnly) await this.save();
  }

  private emit(job: JobRecord): void {
    this.lastEmit.set(job.id, this.now());
    const view = viewOf(job);
    for (const listener of this.listeners) listener(view);
  }

  private save(): Promise<void> {
    const file: JobFile = { version: 1, jobs: [...this.jobs.values()] };
    // A failed write must not stop the job; the next change writes the whole queue again.
    return this.writer.write(file).catch((error: unknown) => {
      console.warn(`svc desktop: cannot save the render queue: ${(error as Error).message}`);
    });
  }
}

function viewOf(job: JobRecord): JobView {
  const { outputDir: _dir, idempotencyKey: _key, renderFailed: _failed, ...view } = job;
  return {
    ...view,
    fileMissing:
      job.status === "completed" && job.outputPath !== undefined && !existsSync(job.outputPath),
  };
}

function outputFileName(job: JobRecord, record: RenderRecord): string {
  const slug = job.title
    .normalize("NFKD")
    .replace(/[^\w.-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 60);
  return `${slug ? `${slug}-` : ""}${record.render_id}.${FILE_EXTENSIONS[record.format]}`;
}
