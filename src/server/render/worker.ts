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
import type { ServiceContext } from "../context";
import type { RendersTable } from "../db/schema";
import { randomToken } from "../ids";
import { parseJobId, type JobQueue, type Lease } from "../queue/job-queue";
import type { JobOutcome, SpeculativeOutcome } from "../metrics";
import { enqueueWebhook } from "../webhooks/webhooks";
import type { Attempt, Engine, JobServices } from "./attempt";
import { decideJobEnd, type AbortReason, type Decision, type JobEnd } from "./failure-policy";
import { jobKind, type JobKind } from "./job-kinds";
import { purgeOutputFiles } from "./render-outputs";
import { ProjectCache } from "./project-cache";
import { announceWorker, forgetWorker, PRESENCE_INTERVAL_MS } from "./worker-presence-repository";
import {
  failRender,
  loadRender,
  loadRunState,
  markRendering,
  requeueRender,
} from "./render-repository";
import { startSpeculativeCopies } from "./speculation";

export type { Engine } from "./attempt";

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
    // Counted by the API when it cuts a render into chunks (worker-presence-repository.ts).
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
      if (await jobKind(job).lossIsHarmless(trx)) return;
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
    const kind = jobKind(job);
    const startedMs = render.started_ms ?? ctx.now();
    await markRendering(ctx.db, render, startedMs, kind.wholeRender);
    const log = ctx.log.child({
      ...(render.request_id ? { reqId: render.request_id } : {}),
      renderId: render.id,
      job: kind.name,
      ...kind.logFields,
      worker: ctx.config.workerName,
      attempt: lease.attempt,
    });
    log.info(`${kind.label} started`);
    kind.countClaim(ctx, lease.attempt);
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
      void loadRunState(ctx.db, render.id, kind.chunkIndex).then(
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
    const limits = {
      maxAttempts: ctx.config.maxAttempts,
      renderTimeoutSeconds: ctx.config.renderTimeoutSeconds,
    };
    try {
      let end: JobEnd;
      try {
        await rm(attempt.workDir, { recursive: true, force: true });
        const result = await kind.run(this.services, attempt);
        log.info(
          {
            finished: result === "finished",
            phasesMs: attempt.phasesMs,
            totalMs: Date.now() - claimedMs,
            ...attempt.details,
            ...(result === "superseded" ? { superseded: true } : {}),
          },
          `${kind.label} finished`,
        );
        end = { returned: result };
      } catch (error) {
        const reason =
          error instanceof RenderAbort
            ? error.reason
            : controller.signal.aborted
              ? (controller.signal.reason as RenderAbort).reason
              : undefined;
        end = { threw: error, abort: reason };
      }
      const decision = decideJobEnd(end, lease.attempt, kind.traits, limits);
      outcome = decision.outcome;
      await this.carryOut(decision, end, attempt, log);
      if (decision.action === "done" && kind.drawsFrames) observeFrameTime(ctx, kind, attempt);
    } finally {
      if (kind.speculativeCopy) countCopy(ctx, outcome);
      ctx.metrics.jobDuration.observe(
        { kind: kind.name, outcome },
        (Date.now() - claimedMs) / 1000,
      );
      clearTimeout(timeout);
      clearInterval(heartbeat);
      for (const cleanup of attempt.cleanups) cleanup();
      clearInterval(cancelCheck);
      this.running.delete(controller);
      await rm(attempt.workDir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** Does what the failure policy decided (failure-policy.ts), and logs it. */
  private async carryOut(
    decision: Decision,
    end: JobEnd,
    attempt: Attempt,
    log: ServiceContext["log"],
  ): Promise<void> {
    const { lease, render } = attempt;
    if (decision.action !== "done") {
      for (const key of attempt.stored) await this.ctx.store.delete(key);
    }
    let retried: boolean | undefined;
    if (decision.action === "release") {
      await this.queue.release(lease);
      if (decision.requeueRender) await requeueRender(this.ctx.db, render.id);
    } else if (decision.action === "finish") {
      await this.queue.finish(lease, decision.state, async () => {});
    } else if (decision.action === "retry") {
      retried = await this.queue.retry(lease, "threw" in end ? String(end.threw) : "");
    } else if (decision.action === "fail") {
      await this.fail(lease, render, decision.failure);
    }
    if (!decision.log) return;
    const fields =
      decision.log.withError && "threw" in end
        ? {
            err: end.threw,
            ...(end.abort ? { reason: end.abort } : {}),
            ...(retried !== undefined ? { retried } : {}),
          }
        : {};
    log[decision.log.level](fields, decision.log.message);
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
function observeFrameTime(ctx: ServiceContext, kind: JobKind, attempt: Attempt): void {
  const frames = attempt.framesDone ?? 0;
  if (frames <= 0) return;
  const { capturing = 0, finishing, rendered } = attempt.phasesMs;
  const end = finishing ?? rendered ?? Date.now() - attempt.claimedMs;
  ctx.metrics.secondsPerFrame.observe({ kind: kind.name }, (end - capturing) / 1000 / frames);
}
