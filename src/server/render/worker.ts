// Render workers: each claims a job (queue/), runs it in a per-job work dir inside the data dir
// while it keeps the job's lease alive, and turns what went wrong into the render's failure. The
// claim/lease loop lives here; each kind of job (queue/job-queue.ts) is its own module:
// - whole (job-whole.ts): one worker renders the whole video (the embedded default, short renders);
// - chunk (job-chunk.ts): one run of segments of a distributed render, stored in the object store;
// - join (job-join.ts): the segments joined without re-encoding, the audio mixed once. A failed
//   join is offered again (queue retry) until its attempts run out; then the render fails with
//   svc_join_failed.
// Completion, the credit charge and the webhook outbox row are one transaction guarded by the
// lease, so a render is completed and charged at most once even when a worker presumed dead comes
// back (render-repository.ts holds the SQL). A lost lease, a deleted render or a failed sibling
// chunk aborts the engine through its signal; so does a cancel (renders.ts), which each job looks
// for every second (the heartbeat, every leaseSeconds/3, would stop a cancelled render's chunks
// only after 20 s of spending). An idle worker looks for straggler chunks to start a second time
// (speculation.ts); the copy that finishes second stops through the same check (the chunk is done).
// Each job's "finished" log line says when its phases began (phasesMs after the claim: capture,
// encoder drain, upload), so a chunk's time outside capturing frames can be read from the logs.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { isEngineError } from "../../engine/errors";
import type { ServiceContext } from "../context";
import type { RendersTable } from "../db/schema";
import { randomToken } from "../ids";
import { parseJobId, type JobQueue, type Lease } from "../queue/job-queue";
import type { JobOutcome, SpeculativeOutcome } from "../metrics";
import { enqueueWebhook } from "../webhooks/webhooks";
import type { Attempt, Engine, JobServices } from "./attempt";
import { engineFailureMessage, joinFailureMessage } from "./failure-hints";
import { runChunkJob } from "./job-chunk";
import { runJoinJob } from "./job-join";
import { runOutputJob } from "./job-output";
import { purgeOutputFiles } from "./render-outputs";
import { runWholeJob } from "./job-whole";
import { ProjectCache } from "./project-cache";
import { announceWorker, forgetWorker, PRESENCE_INTERVAL_MS } from "./worker-presence";
import {
  chunkIsDone,
  failRender,
  loadRender,
  markRendering,
  requeueRender,
} from "./render-repository";
import { startSpeculativeCopies } from "./speculation";

export type { Engine } from "./attempt";

type AbortReason = "timeout" | "lease_lost" | "shutdown" | "cancelled" | "superseded";

class RenderAbort extends Error {
  constructor(readonly reason: AbortReason) {
    super(reason);
  }
}

const IDLE_POLL_MS = 200;
/** How often a running job checks whether its render was cancelled, deleted or failed elsewhere. */
const CANCEL_CHECK_MS = 1_000;
/** How often an idle worker process looks for straggler chunks to copy. */
const SPECULATION_CHECK_MS = 1_000;

export class WorkerPool {
  private stopping = false;
  private readonly loops: Promise<void>[] = [];
  private readonly running = new Set<AbortController>();
  private wake: (() => void) | undefined;
  private presence: NodeJS.Timeout | undefined;
  private lastSpeculationMs = 0;
  private readonly services: JobServices;
  readonly owner: string;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly queue: JobQueue,
    engine: Engine,
  ) {
    this.owner = `${ctx.config.workerName}-${process.pid}-${randomToken(6)}`;
    this.services = {
      ctx,
      queue,
      engine,
      projects: new ProjectCache(
        join(ctx.config.dataDir, "cache", "projects", this.owner),
        ctx.config.projectCacheBytes,
      ),
    };
  }

  start(count: number): void {
    // A worker-only process gets its browser going before it claims or announces anything, so
    // its first job pays no browser start (engine spare-browser.ts); a failure there is the job's
    // to report.
    const ready =
      count > 0 && this.ctx.config.role === "worker"
        ? this.services.engine
            .warmUp({ allowNetwork: this.ctx.config.allowPageNetwork })
            .catch((error: unknown) => {
              this.ctx.log.warn({ err: error }, "worker warm-up failed");
            })
        : Promise.resolve();
    for (let i = 0; i < count; i++) this.loops.push(ready.then(() => this.loop()));
    // Counted by the API when it cuts a render into chunks (worker-presence.ts).
    const announce = () =>
      void announceWorker(this.ctx.db, this.owner, count, this.ctx.now()).catch((error: unknown) =>
        this.ctx.log.warn({ err: error }, "worker presence not written"),
      );
    void ready.then(() => {
      if (this.stopping) return;
      announce();
      this.presence = setInterval(announce, PRESENCE_INTERVAL_MS);
      this.presence.unref();
    });
  }

  /** Stops claiming; waits up to graceMs for running renders, then aborts them and releases their leases. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.wake?.();
    clearInterval(this.presence);
    await forgetWorker(this.ctx.db, this.owner).catch(() => undefined);
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
    await this.services.engine.closeWarmPages();
    await this.services.projects.clear();
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
        // A copy just queued is claimed at once, by this worker or another idle one.
        if (await this.speculate()) continue;
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

  /** While idle: a straggler chunk of a render may be started a second time (speculation.ts). */
  private async speculate(): Promise<boolean> {
    const now = Date.now();
    if (now - this.lastSpeculationMs < SPECULATION_CHECK_MS) return false;
    this.lastSpeculationMs = now;
    return (await startSpeculativeCopies(this.ctx, this.queue)) > 0;
  }

  /** Renders whose worker died on the last attempt become failed (and notify their webhook). */
  private async failExhausted(): Promise<void> {
    // The render fails in the transaction that marks its job exhausted: no window in which the
    // job is failed and the render still "rendering".
    const failedRenders: string[] = [];
    await this.queue.collectExhausted(async (trx, jobId) => {
      const job = parseJobId(jobId);
      const { renderId } = job;
      // A speculative copy is a spare: its first run goes on. A chunk done by its other copy
      // lost nothing.
      if (job.kind === "chunk" && (job.copy || (await chunkIsDone(trx, renderId, job.chunk)))) {
        return;
      }
      const now = this.ctx.now();
      const updated = await failRender(
        trx,
        renderId,
        {
          code: "svc_worker_lost",
          message: "the render was interrupted on every attempt (worker lost); try again",
        },
        now,
      );
      if (updated) {
        await this.queue.cancelRender(trx, renderId);
        await enqueueWebhook(trx, updated, now);
        if (updated.output_count > 0) failedRenders.push(renderId);
      }
    });
    for (const renderId of failedRenders) await purgeOutputFiles(this.ctx, renderId);
  }

  private async runJob(lease: Lease): Promise<void> {
    const { ctx } = this;
    const claimedMs = Date.now();
    const job = parseJobId(lease.jobId);
    const render = await loadRender(ctx.db, job.renderId);
    if (!render || render.deleted_ms !== null || render.status === "failed") {
      await this.queue.finish(lease, "failed", async () => {});
      return;
    }
    if (render.status === "completed") {
      // A job left over from a completed render (a straggler's copy that lost): nothing to do.
      await this.queue.finish(lease, "done", async () => {});
      return;
    }
    const startedMs = render.started_ms ?? ctx.now();
    await markRendering(ctx.db, render, startedMs, job.kind === "whole");
    const log = ctx.log.child({
      ...(render.request_id ? { reqId: render.request_id } : {}),
      renderId: render.id,
      job: job.kind,
      ...(job.kind === "chunk" ? { chunk: job.chunk, ...(job.copy ? { copy: true } : {}) } : {}),
      ...(job.kind === "output" ? { output: job.output } : {}),
      worker: ctx.config.workerName,
      attempt: lease.attempt,
    });
    log.info(`${job.kind === "whole" ? "render" : job.kind} started`);
    if (job.kind === "chunk") {
      ctx.metrics.chunkAttempts.inc();
      if (lease.attempt > 1) ctx.metrics.chunkRetries.inc();
    }
    let outcome: JobOutcome = "failed";

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
    const cancelCheck = setInterval(() => {
      void ctx.db
        .selectFrom("renders")
        .leftJoin("render_chunks", (join) =>
          join
            .onRef("render_chunks.render_id", "=", "renders.id")
            .on("render_chunks.idx", "=", job.kind === "chunk" ? job.chunk : -1),
        )
        .select(["renders.status", "renders.deleted_ms", "render_chunks.state as chunkState"])
        .where("renders.id", "=", render.id)
        .executeTakeFirst()
        .then(
          (row) => {
            if (!row || row.deleted_ms !== null || row.status === "failed") abort("cancelled");
            // The other copy of this chunk finished first; once this one has stored its
            // segments, its own finish finds that out (and changes nothing).
            else if (row.chunkState === "done" && attempt.phasesMs.stored === undefined) {
              abort("superseded");
            }
          },
          () => undefined,
        );
    }, CANCEL_CHECK_MS);
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
      details: {},
      cleanups: [],
    };
    try {
      await rm(attempt.workDir, { recursive: true, force: true });
      const finished =
        job.kind === "whole"
          ? await runWholeJob(this.services, attempt)
          : job.kind === "chunk"
            ? await runChunkJob(this.services, attempt, job.chunk, job.copy === true)
            : job.kind === "output"
              ? await runOutputJob(this.services, attempt, job.output)
              : await runJoinJob(this.services, attempt);
      if (!finished) {
        // Lease lost or render deleted meanwhile: this attempt's files are orphans.
        for (const key of attempt.stored) await ctx.store.delete(key);
      }
      log.info(
        {
          finished,
          phasesMs: attempt.phasesMs,
          totalMs: Date.now() - claimedMs,
          ...attempt.details,
        },
        `${job.kind === "whole" ? "render" : job.kind} finished`,
      );
      outcome = finished ? "completed" : attempt.details.superseded ? "superseded" : "abandoned";
      if (finished) observeFrameTime(ctx, attempt);
    } catch (error) {
      const reason =
        error instanceof RenderAbort
          ? error.reason
          : controller.signal.aborted
            ? (controller.signal.reason as RenderAbort).reason
            : undefined;
      for (const key of attempt.stored) await ctx.store.delete(key);
      if (reason === "shutdown") {
        outcome = "released";
        await this.queue.release(lease);
        if (job.kind === "whole") await requeueRender(ctx.db, render.id);
        log.info("released for another worker (shutdown)");
      } else if (reason === "superseded") {
        // Like a cancel, but only of this copy: the job ends here, the render goes on.
        outcome = "superseded";
        await this.queue.finish(lease, "done", async () => {});
        log.info("chunk abandoned: its other copy finished it first");
      } else if (reason === "cancelled") {
        outcome = "abandoned";
        log.info("render abandoned: cancelled, deleted or failed elsewhere");
      } else if (reason === "lease_lost") {
        outcome = "abandoned";
        log.warn("render abandoned: lease lost, render deleted or failed elsewhere");
      } else if (job.kind === "join" && reason === undefined) {
        // Every chunk is rendered and stored: the join depends on nothing the customer sent, so
        // its failure is the service's (the store, the disk, FFmpeg) and worth another attempt,
        // as a lost worker's job gets. The render fails only when none is left.
        if (lease.attempt < ctx.config.maxAttempts) {
          outcome = "retried";
          const retried = await this.queue.retry(lease, String(error));
          log.warn({ err: error, retried }, "join failed; offered again");
        } else {
          log.error({ err: error }, "join failed on its last attempt");
          await this.fail(lease, render, {
            code: "svc_join_failed",
            message: joinFailureMessage(error, lease.attempt),
          });
        }
      } else if (job.kind === "chunk" && job.copy) {
        // A failed speculative copy fails nothing: the chunk's first run goes on.
        await this.queue.finish(lease, "failed", async () => {});
        log.warn({ err: error, reason }, "speculative chunk copy failed; the first run goes on");
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
      if (job.kind === "chunk" && job.copy) countCopy(ctx, outcome);
      ctx.metrics.jobDuration.observe({ kind: job.kind, outcome }, (Date.now() - claimedMs) / 1000);
      clearTimeout(timeout);
      clearInterval(heartbeat);
      for (const cleanup of attempt.cleanups) cleanup();
      clearInterval(cancelCheck);
      this.running.delete(controller);
      await rm(attempt.workDir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  private async fail(
    lease: Lease,
    render: RendersTable,
    failure: { code: string; message: string },
  ): Promise<void> {
    let failedNow = false;
    await this.queue.finish(lease, "failed", async (trx) => {
      const now = this.ctx.now();
      const failed = await failRender(trx, render.id, failure, now);
      if (!failed) return;
      failedNow = true;
      // The other chunks or outputs of this render stop too (their jobs see the cancel).
      await this.queue.cancelRender(trx, render.id);
      await enqueueWebhook(trx, failed, now);
    });
    // Outputs already finished are not charged, so not kept either.
    if (failedNow && render.output_count > 0) await purgeOutputFiles(this.ctx, render.id);
  }
}

/** What became of a speculative copy (a copy given back at shutdown runs again: not counted). */
function countCopy(ctx: ServiceContext, outcome: JobOutcome): void {
  const counted: Partial<Record<JobOutcome, SpeculativeOutcome>> = {
    completed: "won",
    superseded: "lost",
    failed: "failed",
  };
  const as = counted[outcome];
  if (as) ctx.metrics.speculativeChunks.inc({ outcome: as });
}

/** Seconds per frame of a finished whole or chunk job: its capture time over its frames. */
function observeFrameTime(ctx: ServiceContext, attempt: Attempt): void {
  const frames = attempt.framesDone ?? 0;
  if (attempt.job.kind === "join" || frames <= 0) return;
  const { capturing = 0, finishing, rendered } = attempt.phasesMs;
  const end = finishing ?? rendered ?? Date.now() - attempt.claimedMs;
  ctx.metrics.secondsPerFrame.observe(
    { kind: attempt.job.kind },
    (end - capturing) / 1000 / frames,
  );
}
