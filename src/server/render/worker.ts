// Render workers: each claims a job (queue/), unzips the asset safely into a per-job work dir
// inside the data dir, renders with the engine (page network off unless configured, one browser
// worker), stores what it made and finishes the job. Three kinds of job (queue/job-queue.ts):
// - whole: one worker renders the whole video (the embedded default, and short renders);
// - chunk: one run of segments of a distributed render; its encoded segments go to the object
//   store, the chunk that starts the video records the audio, the one holding the thumbnail frame
//   cuts the thumbnail, and the chunk that completes the set queues the join (one atomic counter);
// - join: the segments joined without re-encoding, the audio mixed once. A failed join is offered
//   again (queue retry) until its attempts run out; then the render fails with svc_join_failed.
// Completion, the credit charge and the webhook outbox row are one transaction guarded by the
// lease, so a render is completed and charged at most once even when a worker presumed dead comes
// back. Progress is written at most twice a second (for chunks: the sum over chunks). A lost lease,
// a deleted render or a failed sibling chunk aborts the engine through its signal.
// Each job's "finished" log line says when its phases began (phasesMs after the claim: capture,
// encoder drain, upload), so a chunk's time outside capturing frames can be read from the logs.
import { createReadStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { Transaction } from "kysely";
import { isEngineError } from "../../engine/errors";
import type { AudioInput } from "../../engine/encode";
import type { ChunkResult, Chunk } from "../../engine/chunks";
import type { RenderCompositionOptions, RenderProgress, RenderResult } from "../../engine/types";
import type { AspectRatio, OutputFormat, Quality, Resolution } from "../../shared/render-options";
import type { ServiceContext } from "../context";
import type { DB, RendersTable } from "../db/schema";
import { randomToken } from "../ids";
import { jobIdOf, parseJobId, type JobQueue, type Lease, type RenderJob } from "../queue/job-queue";
import { enqueueWebhook } from "../webhooks/webhooks";
import { extractZip } from "../assets/zip-inspect";
import { renderCostMilli } from "./credits";
import { engineFailureMessage, joinFailureMessage } from "./failure-hints";

/** What a worker needs of the engine; injectable so API-only processes never load it. */
export interface Engine {
  renderComposition(options: RenderCompositionOptions): Promise<RenderResult>;
  renderChunk(
    options: Omit<RenderCompositionOptions, "output" | "thumbnail"> & {
      chunk: Chunk;
      frames: number;
      outputDir: string;
    },
  ): Promise<ChunkResult>;
  joinChunks(options: {
    segmentFiles: string[];
    output: string;
    format: OutputFormat;
    durationSeconds: number;
    audio: AudioInput[];
    signal?: AbortSignal;
  }): Promise<void>;
}

type AbortReason = "timeout" | "lease_lost" | "shutdown";

class RenderAbort extends Error {
  constructor(readonly reason: AbortReason) {
    super(reason);
  }
}

const IDLE_POLL_MS = 200;
const PROGRESS_INTERVAL_MS = 500;

/**
 * Moments of a job logged with its end (ms after the claim): where a chunk's time goes. Between
 * "capturing" and "firstFrame" a chunk brings the page to its first frame (catch-up).
 */
type Phase = "capturing" | "firstFrame" | "finishing" | "downloaded" | "rendered" | "stored";

/** One job being worked on: its render, lease, work dir and the objects it stored so far. */
interface Attempt {
  lease: Lease;
  job: RenderJob;
  render: RendersTable;
  workDir: string;
  signal: AbortSignal;
  /** Objects stored by this attempt; removed if it does not finish. */
  stored: string[];
  log: ServiceContext["log"];
  claimedMs: number;
  phasesMs: Partial<Record<Phase, number>>;
}

function mark(attempt: Attempt, phase: Phase): void {
  attempt.phasesMs[phase] ??= Date.now() - attempt.claimedMs;
}

/** The engine's progress is reported at most every 100 ms: "firstFrame" is that close. */
function markProgress(attempt: Attempt, progress: RenderProgress): void {
  if (progress.stage === "preparing") return;
  mark(attempt, progress.stage);
  if (progress.framesDone > 0) mark(attempt, "firstFrame");
}

export class WorkerPool {
  private stopping = false;
  private readonly loops: Promise<void>[] = [];
  private readonly running = new Set<AbortController>();
  private wake: (() => void) | undefined;
  readonly owner: string;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly queue: JobQueue,
    private readonly engine: Engine,
  ) {
    this.owner = `${ctx.config.workerName}-${process.pid}-${randomToken(6)}`;
  }

  start(count: number): void {
    for (let i = 0; i < count; i++) this.loops.push(this.loop());
  }

  /** Stops claiming; waits up to graceMs for running renders, then aborts them and releases their leases. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.wake?.();
    const all = Promise.all(this.loops);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<"expired">((resolve) => {
      timer = setTimeout(() => resolve("expired"), graceMs);
    });
    if ((await Promise.race([all, expired])) === "expired") {
      for (const controller of this.running) controller.abort(new RenderAbort("shutdown"));
      await all;
    }
    clearTimeout(timer);
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.failExhausted();
        const lease = await this.queue.claim(this.owner);
        if (lease) {
          await this.runJob(lease);
          continue;
        }
      } catch (error) {
        this.ctx.log.error({ err: error }, "worker loop error");
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, IDLE_POLL_MS);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Renders whose worker died on the last attempt become failed (and notify their webhook). */
  private async failExhausted(): Promise<void> {
    // The render fails in the transaction that marks its job exhausted: no window in which the
    // job is failed and the render still "rendering".
    await this.queue.collectExhausted(async (trx, jobId) => {
      const { renderId } = parseJobId(jobId);
      const now = this.ctx.now();
      const updated = await trx
        .updateTable("renders")
        .set({
          status: "failed",
          failure_code: "svc_worker_lost",
          failure_message: "the render was interrupted on every attempt (worker lost); try again",
          completed_ms: now,
        })
        .where("id", "=", renderId)
        .where("status", "in", ["queued", "rendering"])
        .returningAll()
        .executeTakeFirst();
      if (updated) {
        await this.queue.cancelRender(trx, renderId);
        await enqueueWebhook(trx, updated, now);
      }
    });
  }

  private async runJob(lease: Lease): Promise<void> {
    const { ctx } = this;
    const claimedMs = Date.now();
    const job = parseJobId(lease.jobId);
    const render = await ctx.db
      .selectFrom("renders")
      .selectAll()
      .where("id", "=", job.renderId)
      .executeTakeFirst();
    if (!render || render.deleted_ms !== null || render.status === "failed") {
      await this.queue.finish(lease, "failed", async () => {});
      return;
    }
    const startedMs = render.started_ms ?? ctx.now();
    await ctx.db
      .updateTable("renders")
      .set({
        status: "rendering",
        started_ms: startedMs,
        ...(job.kind === "whole" ? { progress: 0 } : {}),
      })
      .where("id", "=", render.id)
      .where("status", "in", ["queued", "rendering"])
      .execute();
    const log = ctx.log.child({
      renderId: render.id,
      job: job.kind,
      ...(job.kind === "chunk" ? { chunk: job.chunk } : {}),
      worker: ctx.config.workerName,
      attempt: lease.attempt,
    });
    log.info(`${job.kind === "whole" ? "render" : job.kind} started`);

    const controller = new AbortController();
    this.running.add(controller);
    const abort = (reason: AbortReason) => {
      if (!controller.signal.aborted) controller.abort(new RenderAbort(reason));
    };
    const timeout = setTimeout(() => abort("timeout"), ctx.config.renderTimeoutSeconds * 1000);
    const heartbeat = setInterval(
      () => {
        void this.queue.heartbeat(lease).then(
          (held) => {
            if (!held) abort("lease_lost");
          },
          (error: unknown) => log.warn({ err: error }, "heartbeat failed"),
        );
      },
      Math.max(250, (ctx.config.leaseSeconds * 1000) / 3),
    );
    const attempt: Attempt = {
      lease,
      job,
      render,
      workDir: join(
        ctx.config.dataDir,
        "work",
        `${lease.jobId.replace(/:/g, "-")}-${lease.attempt}`,
      ),
      signal: controller.signal,
      stored: [],
      log,
      claimedMs,
      phasesMs: {},
    };
    try {
      await rm(attempt.workDir, { recursive: true, force: true });
      const finished =
        job.kind === "whole"
          ? await this.renderWhole(attempt)
          : job.kind === "chunk"
            ? await this.renderChunk(attempt, job.chunk)
            : await this.join(attempt);
      if (!finished) {
        // Lease lost or render deleted meanwhile: this attempt's files are orphans.
        for (const key of attempt.stored) await ctx.store.delete(key);
      }
      log.info(
        { finished, phasesMs: attempt.phasesMs, totalMs: Date.now() - claimedMs },
        `${job.kind === "whole" ? "render" : job.kind} finished`,
      );
    } catch (error) {
      const reason =
        error instanceof RenderAbort
          ? error.reason
          : controller.signal.aborted
            ? (controller.signal.reason as RenderAbort).reason
            : undefined;
      for (const key of attempt.stored) await ctx.store.delete(key);
      if (reason === "shutdown") {
        await this.queue.release(lease);
        if (job.kind === "whole") {
          await ctx.db
            .updateTable("renders")
            .set({ status: "queued", progress: 0 })
            .where("id", "=", render.id)
            .where("status", "=", "rendering")
            .execute();
        }
        log.info("released for another worker (shutdown)");
      } else if (reason === "lease_lost") {
        log.warn("render abandoned: lease lost, render deleted or failed elsewhere");
      } else if (job.kind === "join" && reason === undefined) {
        // Every chunk is rendered and stored: the join depends on nothing the customer sent, so
        // its failure is the service's (the store, the disk, FFmpeg) and worth another attempt,
        // as a lost worker's job gets. The render fails only when none is left.
        if (lease.attempt < ctx.config.maxAttempts) {
          const retried = await this.queue.retry(lease, String(error));
          log.warn({ err: error, retried }, "join failed; offered again");
        } else {
          log.error({ err: error }, "join failed on its last attempt");
          await this.fail(lease, render, {
            code: "svc_join_failed",
            message: joinFailureMessage(error, lease.attempt),
          });
        }
      } else {
        const failure =
          reason === "timeout"
            ? {
                code: "svc_render_timeout",
                message: `the render took longer than ${ctx.config.renderTimeoutSeconds} s`,
              }
            : isEngineError(error)
              ? { code: error.code, message: engineFailureMessage(error) }
              : { code: "svc_render_failed", message: "the render failed inside the service" };
        if (!isEngineError(error) && reason !== "timeout")
          log.error({ err: error }, "render failed");
        await this.fail(lease, render, failure);
      }
    } finally {
      clearTimeout(timeout);
      clearInterval(heartbeat);
      this.running.delete(controller);
      await rm(attempt.workDir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** The render's project, unzipped safely into the attempt's work dir. */
  private async unpackProject(attempt: Attempt): Promise<string> {
    const asset = await this.ctx.db
      .selectFrom("assets")
      .select("storage_key")
      .where("id", "=", attempt.render.asset_id)
      .executeTakeFirst();
    if (!asset?.storage_key)
      throw new Error(`the project asset ${attempt.render.asset_id} is missing`);
    const projectDir = join(attempt.workDir, "project");
    const local = await this.ctx.store.toLocalFile(asset.storage_key);
    try {
      await extractZip(local.path, projectDir);
    } finally {
      await local.release();
    }
    return projectDir;
  }

  private renderOptions(attempt: Attempt, projectDir: string) {
    const { render } = attempt;
    return {
      projectDir,
      composition: render.composition,
      fps: render.fps,
      quality: render.quality as Quality,
      format: render.format as OutputFormat,
      resolution: render.resolution as Resolution,
      aspectRatio: render.aspect_ratio as AspectRatio,
      variables: JSON.parse(render.variables_json) as Record<string, unknown>,
      strictVariables: render.strict_variables === 1,
      workers: 1,
      allowNetwork: this.ctx.config.allowPageNetwork,
      signal: attempt.signal,
    } satisfies Partial<RenderCompositionOptions>;
  }

  private async store(attempt: Attempt, key: string, file: string): Promise<string> {
    await this.ctx.store.put(key, createReadStream(file));
    attempt.stored.push(key);
    return key;
  }

  private prefix(attempt: Attempt): string {
    return `renders/${attempt.render.user_id}/${attempt.render.id}`;
  }

  private async renderWhole(attempt: Attempt): Promise<boolean> {
    const { render } = attempt;
    const projectDir = await this.unpackProject(attempt);
    let lastProgress = 0;
    const result = await this.engine.renderComposition({
      ...this.renderOptions(attempt, projectDir),
      output: join(attempt.workDir, "out", `video.${render.format}`),
      thumbnail: true,
      onProgress: (progress) => {
        markProgress(attempt, progress);
        const now = Date.now();
        if (now - lastProgress < PROGRESS_INTERVAL_MS || progress.framesTotal <= 0) return;
        lastProgress = now;
        this.writeProgress(render.id, Math.min(0.99, progress.framesDone / progress.framesTotal));
      },
    });
    if (attempt.signal.aborted) throw attempt.signal.reason;
    mark(attempt, "rendered");
    const prefix = `${this.prefix(attempt)}/${attempt.lease.attempt}`;
    const videoKey = await this.store(
      attempt,
      `${prefix}/video.${render.format}`,
      result.outputPath,
    );
    const thumbnailKey = result.thumbnailPath
      ? await this.store(attempt, `${prefix}/thumbnail.jpg`, result.thumbnailPath)
      : null;
    mark(attempt, "stored");
    return this.queue.finish(attempt.lease, "done", (trx) =>
      this.completeRender(trx, render, {
        videoKey,
        thumbnailKey,
        durationSeconds: result.durationSeconds,
      }),
    );
  }

  private async renderChunk(attempt: Attempt, index: number): Promise<boolean> {
    const { render, lease } = attempt;
    const chunk = await this.ctx.db
      .selectFrom("render_chunks")
      .selectAll()
      .where("render_id", "=", render.id)
      .where("idx", "=", index)
      .executeTakeFirstOrThrow();
    await this.ctx.db
      .updateTable("render_chunks")
      .set({ state: "rendering", attempts: lease.attempt, started_ms: this.ctx.now() })
      .where("render_id", "=", render.id)
      .where("idx", "=", index)
      .where("state", "!=", "done")
      .execute();
    const projectDir = await this.unpackProject(attempt);
    const outputDir = join(attempt.workDir, "out");
    await mkdir(outputDir, { recursive: true });
    let lastProgress = 0;
    const result = await this.engine.renderChunk({
      ...this.renderOptions(attempt, projectDir),
      chunk: {
        index,
        firstSegment: chunk.first_segment,
        segmentCount: chunk.segment_count,
        firstFrame: chunk.first_frame,
        frameCount: chunk.frame_count,
      },
      frames: render.frames!,
      outputDir,
      onProgress: (progress: RenderProgress) => {
        markProgress(attempt, progress);
        const now = Date.now();
        if (now - lastProgress < PROGRESS_INTERVAL_MS) return;
        lastProgress = now;
        void this.writeChunkProgress(render, index, progress.framesDone);
      },
    });
    if (attempt.signal.aborted) throw attempt.signal.reason;
    mark(attempt, "rendered");
    const prefix = `${this.prefix(attempt)}/chunks/${index}-${lease.attempt}`;
    const segmentKeys: string[] = [];
    for (const file of result.segmentFiles) {
      segmentKeys.push(await this.store(attempt, `${prefix}/${basename(file)}`, file));
    }
    const thumbnailKey = result.thumbnailPath
      ? await this.store(attempt, `${prefix}/thumbnail.jpg`, result.thumbnailPath)
      : undefined;
    mark(attempt, "stored");
    const audio =
      index === 0
        ? JSON.stringify(result.audio.map((input) => toProjectRelative(input, projectDir)))
        : undefined;
    return this.queue.finish(lease, "done", async (trx) => {
      const done = await trx
        .updateTable("render_chunks")
        .set({
          state: "done",
          frames_done: chunk.frame_count,
          worker: this.ctx.config.workerName,
          segments_json: JSON.stringify(segmentKeys),
          completed_ms: this.ctx.now(),
        })
        .where("render_id", "=", render.id)
        .where("idx", "=", index)
        .where("state", "!=", "done")
        .executeTakeFirst();
      if (Number(done.numUpdatedRows) !== 1) return;
      // One atomic counter: whichever chunk completes the set (the row lock orders them) queues
      // the join, exactly once.
      const counted = await trx
        .updateTable("renders")
        .set((eb) => ({
          chunks_done: eb("chunks_done", "+", 1),
          ...(audio !== undefined ? { audio_json: audio } : {}),
          ...(thumbnailKey ? { thumbnail_key: thumbnailKey } : {}),
        }))
        .where("id", "=", render.id)
        .where("status", "in", ["queued", "rendering"])
        .where("deleted_ms", "is", null)
        .returning(["chunks_done", "chunk_count"])
        .executeTakeFirst();
      if (counted && counted.chunks_done === counted.chunk_count) {
        await this.queue.enqueue(trx, jobIdOf({ kind: "join", renderId: render.id }));
      }
    });
  }

  private async join(attempt: Attempt): Promise<boolean> {
    const { render, lease } = attempt;
    const chunks = await this.ctx.db
      .selectFrom("render_chunks")
      .select(["idx", "segments_json", "state"])
      .where("render_id", "=", render.id)
      .orderBy("idx")
      .execute();
    if (chunks.length !== render.chunk_count || chunks.some((chunk) => chunk.state !== "done")) {
      throw new Error(`render ${render.id} is not ready to join`);
    }
    const segmentsDir = join(attempt.workDir, "segments");
    await mkdir(segmentsDir, { recursive: true });
    const segmentFiles: string[] = [];
    const releases: (() => Promise<void>)[] = [];
    try {
      for (const key of chunks.flatMap((chunk) => JSON.parse(chunk.segments_json!) as string[])) {
        const local = await this.ctx.store.toLocalFile(key);
        releases.push(local.release);
        segmentFiles.push(local.path);
      }
      mark(attempt, "downloaded");
      const recorded = JSON.parse(render.audio_json ?? "[]") as AudioInput[];
      const projectDir = recorded.length > 0 ? await this.unpackProject(attempt) : attempt.workDir;
      const audio = recorded.flatMap((input) => {
        const source = fromProjectRelative(input, projectDir);
        return source ? [{ ...input, source }] : [];
      });
      const output = join(attempt.workDir, "out", `video.${render.format}`);
      await mkdir(join(attempt.workDir, "out"), { recursive: true });
      const durationSeconds = render.frames! / render.fps;
      await this.engine.joinChunks({
        segmentFiles,
        output,
        format: render.format as OutputFormat,
        durationSeconds,
        audio,
        signal: attempt.signal,
      });
      if (attempt.signal.aborted) throw attempt.signal.reason;
      mark(attempt, "rendered");
      const videoKey = await this.store(
        attempt,
        `${this.prefix(attempt)}/${lease.attempt}/video.${render.format}`,
        output,
      );
      mark(attempt, "stored");
      const finished = await this.queue.finish(lease, "done", (trx) =>
        this.completeRender(trx, render, {
          videoKey,
          thumbnailKey: render.thumbnail_key,
          durationSeconds,
        }),
      );
      if (finished) {
        // The segments served their purpose; the thumbnail stays with the render.
        for (const chunk of chunks) {
          for (const key of JSON.parse(chunk.segments_json!) as string[]) {
            await this.ctx.store.delete(key).catch(() => undefined);
          }
        }
      }
      return finished;
    } finally {
      for (const release of releases) await release().catch(() => undefined);
    }
  }

  /** Completes the render and charges for it, once: the status guard makes a second call a no-op. */
  private async completeRender(
    trx: Transaction<DB>,
    render: RendersTable,
    output: { videoKey: string; thumbnailKey: string | null; durationSeconds: number },
  ): Promise<void> {
    const now = this.ctx.now();
    const cost = renderCostMilli(output.durationSeconds, render.resolution);
    const completed = await trx
      .updateTable("renders")
      .set({
        status: "completed",
        progress: 1,
        duration: output.durationSeconds,
        credits_charged_milli: cost,
        completed_ms: now,
        video_key: output.videoKey,
        thumbnail_key: output.thumbnailKey,
      })
      .where("id", "=", render.id)
      .where("status", "!=", "completed")
      .where("deleted_ms", "is", null)
      .returningAll()
      .executeTakeFirst();
    if (!completed) return;
    await trx
      .updateTable("users")
      .set((eb) => ({
        credits_remaining_milli: eb("credits_remaining_milli", "-", cost),
        credits_used_milli: eb("credits_used_milli", "+", cost),
      }))
      .where("id", "=", render.user_id)
      .execute();
    await enqueueWebhook(trx, completed, now);
  }

  private writeProgress(renderId: string, fraction: number): void {
    void this.ctx.db
      .updateTable("renders")
      .set({ progress: fraction })
      .where("id", "=", renderId)
      .where("status", "=", "rendering")
      .execute()
      .catch(() => undefined);
  }

  /** A render in chunks progresses by the frames of all its chunks together. */
  private async writeChunkProgress(render: RendersTable, index: number, framesDone: number) {
    try {
      await this.ctx.db
        .updateTable("render_chunks")
        .set({ frames_done: framesDone })
        .where("render_id", "=", render.id)
        .where("idx", "=", index)
        .where("state", "=", "rendering")
        .execute();
      const sum = await this.ctx.db
        .selectFrom("render_chunks")
        .select((eb) => eb.fn.sum<number>("frames_done").as("frames"))
        .where("render_id", "=", render.id)
        .executeTakeFirst();
      this.writeProgress(render.id, Math.min(0.99, Number(sum?.frames ?? 0) / render.frames!));
    } catch {
      // Progress is advisory; the next update will try again.
    }
  }

  private async fail(
    lease: Lease,
    render: RendersTable,
    failure: { code: string; message: string },
  ): Promise<void> {
    await this.queue.finish(lease, "failed", async (trx) => {
      const now = this.ctx.now();
      const failed = await trx
        .updateTable("renders")
        .set({
          status: "failed",
          failure_code: failure.code,
          failure_message: failure.message.slice(0, 2000),
          completed_ms: now,
        })
        .where("id", "=", render.id)
        .where("status", "in", ["queued", "rendering"])
        .returningAll()
        .executeTakeFirst();
      if (!failed) return;
      // The other chunks of this render stop too (their heartbeats see the cancel).
      await this.queue.cancelRender(trx, render.id);
      await enqueueWebhook(trx, failed, now);
    });
  }
}

/** An audio source inside the project, written relative to it (other workers unzip elsewhere). */
function toProjectRelative(input: AudioInput, projectDir: string): AudioInput {
  if (!isAbsolute(input.source)) return input;
  return { ...input, source: relative(projectDir, input.source) };
}

/** The recorded source inside this worker's copy of the project; undefined if it would escape. */
function fromProjectRelative(input: AudioInput, projectDir: string): string | undefined {
  if (/^https?:\/\//.test(input.source)) return input.source;
  const root = resolve(projectDir);
  const source = resolve(root, input.source);
  return source.startsWith(root + sep) ? source : undefined;
}
