// Render jobs: each POST /api/render becomes a job with a `call_id`, run by the configured
// renderer (the sandbox or the svc render service) under a time limit, and stored when it
// succeeds. The renderer writes into the job's own work folder; only a finished video is moved
// into the store (RenderStore.put is whole-or-nothing), and the work folder is removed whatever
// happens, so a killed, failed or timed-out render leaves no file anywhere.
// Jobs are kept in memory: one instance answers for its own renders. A finished video outlives
// the process in the store, and GET /api/render/:id still finds it after a restart by its name.
import { randomBytes } from "node:crypto";
import { mkdir, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { FILE_EXTENSIONS } from "svc/shared";
import { TemplateError } from "./errors";
import type { RenderSpec } from "./request";
import type { RenderStore } from "./storage";

export interface RenderProgressUpdate {
  /** 0..1 */
  progress: number;
  etaSeconds?: number | undefined;
}

/** One render as a renderer sees it. */
export interface RenderRun {
  /** Where the video goes (inside workDir). */
  output: string;
  /** Scratch folder of this render (removed afterwards). */
  workDir: string;
  /** Aborted at the time limit or on shutdown; `reason` is the RenderFailure to report. */
  signal: AbortSignal;
  onProgress: (update: RenderProgressUpdate) => void;
}

/** What a finished render reports besides its file. */
export interface RenderOutcome {
  /** What may not look as intended, e.g. a request refused by the network policy. */
  warnings: string[];
}

/** Turns a checked request into a video file at `run.output`; throws a RenderFailure otherwise. */
export interface Renderer {
  render(spec: RenderSpec, run: RenderRun): Promise<RenderOutcome>;
}

/** Why a render failed, as the job's result says it. */
export class RenderFailure extends Error {
  override readonly name = "RenderFailure";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type JobResult =
  | { call_id: string; status: "running"; progress: number; eta_seconds?: number }
  | { call_id: string; status: "done"; url: string; warnings?: string[] }
  | { call_id: string; status: "failed"; error: { code: string; message: string } };

interface Job {
  id: string;
  name: string;
  state: JobResult;
  controller: AbortController;
}

export interface JobsOptions {
  renderer: Renderer;
  store: RenderStore;
  workDir: string;
  maxConcurrent: number;
  timeLimitSeconds: number;
}

/** Finished jobs kept for GET /api/render/:id (older ones are found in the store by name). */
const KEPT_FINISHED_JOBS = 1000;
const ID_PATTERN = /^call_[0-9a-f]{16}$/;

export function renderUrl(name: string): string {
  return `/renders/${name}`;
}

export class RenderJobs {
  private readonly jobs = new Map<string, Job>();
  /** Renders in progress, until each has cleaned up. */
  private readonly active = new Set<Promise<JobResult>>();

  constructor(private readonly options: JobsOptions) {}

  /** Starts a render, or refuses with too_many_renders when the limit is reached. */
  start(spec: RenderSpec): { id: string; finished: Promise<JobResult> } {
    const running = this.active.size;
    if (running >= this.options.maxConcurrent) {
      const retryAfter = this.retryAfterSeconds();
      throw new TemplateError(
        "too_many_renders",
        `${running} render${running === 1 ? " is" : "s are"} running, the most this server takes at once (MAX_CONCURRENT_RENDERS). Try again in ${retryAfter} s.`,
        { headers: { "retry-after": String(retryAfter) } },
      );
    }
    const id = `call_${randomBytes(8).toString("hex")}`;
    const name = `${id}.${FILE_EXTENSIONS[spec.settings.format]}`;
    const job: Job = {
      id,
      name,
      state: { call_id: id, status: "running", progress: 0 },
      controller: new AbortController(),
    };
    this.jobs.set(id, job);
    const finished = this.run(job, spec);
    this.active.add(finished);
    void finished.finally(() => {
      this.active.delete(finished);
      this.prune();
    });
    return { id, finished };
  }

  /** The job's state; for an id this process does not know, whether its video is stored. */
  async get(id: string): Promise<JobResult | undefined> {
    const job = this.jobs.get(id);
    if (job) return job.state;
    if (!ID_PATTERN.test(id)) return undefined;
    for (const extension of Object.values(FILE_EXTENSIONS)) {
      const name = `${id}.${extension}`;
      if (await this.options.store.get(name)) {
        return { call_id: id, status: "done", url: renderUrl(name) };
      }
    }
    return undefined;
  }

  /**
   * Removes work folders left by a server that died mid-render. Only folders older than the time
   * limit (plus a minute) go: no render of any instance sharing WORK_DIR can still be using them.
   */
  async sweepStaleWork(now = Date.now()): Promise<void> {
    const cutoff = now - (this.options.timeLimitSeconds + 60) * 1000;
    const entries = await readdir(this.options.workDir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || !ID_PATTERN.test(entry.name)) continue;
      const path = join(this.options.workDir, entry.name);
      const info = await stat(path).catch(() => undefined);
      if (info && info.mtimeMs < cutoff) await rm(path, { recursive: true, force: true });
    }
  }

  /** Stops every running render (server shutdown) and waits until each has cleaned up. */
  async stopAll(): Promise<void> {
    for (const job of this.jobs.values()) {
      if (job.state.status === "running")
        job.controller.abort(
          new RenderFailure("shutdown", "The server stopped during the render."),
        );
    }
    await Promise.all(this.active);
  }

  private async run(job: Job, spec: RenderSpec): Promise<JobResult> {
    const { timeLimitSeconds } = this.options;
    const workDir = join(this.options.workDir, job.id);
    const timer = setTimeout(
      () =>
        job.controller.abort(
          new RenderFailure(
            "render_timeout",
            `The render ran longer than the ${timeLimitSeconds} s time limit and was stopped; nothing was stored. Render at a lower fps or quality, or raise RENDER_TIME_LIMIT_SECONDS.`,
          ),
        ),
      timeLimitSeconds * 1000,
    );
    // Published only once the work folder is gone: whoever sees the result finds nothing left.
    let result: JobResult;
    try {
      await mkdir(workDir, { recursive: true });
      const output = join(workDir, job.name);
      const outcome = await this.options.renderer.render(spec, {
        output,
        workDir,
        signal: job.controller.signal,
        onProgress: (update) => {
          if (job.state.status !== "running") return;
          job.state = {
            call_id: job.id,
            status: "running",
            progress: Math.max(0, Math.min(1, update.progress)),
            ...(update.etaSeconds !== undefined
              ? { eta_seconds: Math.ceil(update.etaSeconds) }
              : {}),
          };
        },
      });
      if (job.controller.signal.aborted) throw job.controller.signal.reason;
      await this.options.store.put(job.name, output);
      if (job.controller.signal.aborted) {
        // Stopped while the video was going in (an upload takes a while): take it out again.
        await this.options.store.delete(job.name);
        throw job.controller.signal.reason;
      }
      result = {
        call_id: job.id,
        status: "done",
        url: renderUrl(job.name),
        ...(outcome.warnings.length > 0 ? { warnings: outcome.warnings } : {}),
      };
      for (const warning of outcome.warnings) console.warn(`render ${job.id}: ${warning}`);
    } catch (error) {
      const failure = job.controller.signal.aborted ? job.controller.signal.reason : error;
      result = {
        call_id: job.id,
        status: "failed",
        error:
          failure instanceof RenderFailure
            ? { code: failure.code, message: failure.message }
            : {
                code: "render_failed",
                message: "The render failed unexpectedly; see the server log.",
              },
      };
      if (!(failure instanceof RenderFailure)) console.error(`render ${job.id} failed:`, error);
    } finally {
      clearTimeout(timer);
      // Retried: a killed sandbox's last processes may still be letting go of their files.
      await rm(workDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }).catch(
        (error: unknown) => console.error(`render ${job.id}: could not remove ${workDir}:`, error),
      );
    }
    job.state = result;
    return result;
  }

  /** Seconds until a slot is likely free: the shortest estimate of a running render. */
  private retryAfterSeconds(): number {
    const estimates = [...this.jobs.values()]
      .map((job) => (job.state.status === "running" ? job.state.eta_seconds : undefined))
      .filter((eta): eta is number => eta !== undefined);
    const soonest = estimates.length > 0 ? Math.min(...estimates) : 10;
    return Math.max(1, Math.min(600, soonest));
  }

  private prune(): void {
    const finished = [...this.jobs.values()].filter((job) => job.state.status !== "running");
    for (const job of finished.slice(0, Math.max(0, finished.length - KEPT_FINISHED_JOBS))) {
      this.jobs.delete(job.id);
    }
  }
}
