// The render queue's state: the jobs in memory, `jobs.json` in the app data dir (rewritten
// atomically on every stage change, so a kill leaves the last stage on disk) and the listeners
// that mirror every change to the renderer. Progress-only changes reach listeners at most every
// 200 ms and are not written; stage changes go out and to disk at once.
import { existsSync } from "node:fs";
import type { JobView } from "../shared/ipc";
import { ClientError } from "../core/errors";
import { JsonFileWriter, readJsonFile } from "../node/atomic-file";

/** What is kept on disk for one job (the view minus what is computed when shown). */
export interface JobRecord extends Omit<JobView, "fileMissing"> {
  outputDir: string;
  /** Made with the job, so a restarted upload replays the same asset and render. */
  idempotencyKey: string;
  /** The render itself failed: a retry renders again instead of re-attaching. */
  renderFailed: boolean;
}

interface JobFile {
  version: 1;
  jobs: JobRecord[];
}

const PROGRESS_EVENT_INTERVAL_MS = 200;

export class JobStore {
  private readonly jobs = new Map<string, JobRecord>();
  private readonly listeners = new Set<(job: JobView) => void>();
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
    return store;
  }

  onUpdate(listener: (job: JobView) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
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
  async change(
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

  private save(): Promise<void> {
    const file: JobFile = { version: 1, jobs: [...this.jobs.values()] };
    // A failed write must not stop the job; the next change writes the whole queue again.
    return this.writer.write(file).catch((error: unknown) => {
      console.warn(`svc desktop: cannot save the render queue: ${(error as Error).message}`);
    });
  }
}

/** What the renderer sees of a job: no key or folder, plus whether its video is still there. */
export function viewOf(job: JobRecord): JobView {
  const { outputDir: _dir, idempotencyKey: _key, renderFailed: _failed, ...view } = job;
  return {
    ...view,
    fileMissing:
      job.status === "completed" && job.outputPath !== undefined && !existsSync(job.outputPath),
  };
}
