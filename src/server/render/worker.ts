// Render workers: each claims a job (queue.ts), unzips the asset safely into a per-render work
// dir inside the data dir, renders with the engine (page network off unless configured, one
// browser worker), stores video + thumbnail and finishes the job. Completion, the credit charge
// and the webhook outbox row are one transaction guarded by the lease, so a render is completed
// and charged at most once even when a worker presumed dead comes back. Progress is written at
// most twice a second. A lost lease or a deleted render aborts the engine through its signal.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { createReadStream } from "node:fs";
import { isEngineError } from "../../engine/errors";
import { engineFailureMessage } from "./failure-hints";
import type { RenderCompositionOptions, RenderResult } from "../../engine/types";
import type { AspectRatio, OutputFormat, Quality, Resolution } from "../../shared/render-options";
import type { ServiceContext } from "../context";
import { renderCostMilli } from "./credits";
import type { RendersTable } from "../db/schema";
import { randomToken } from "../ids";
import type { JobQueue, Lease } from "../queue/job-queue";
import { enqueueWebhook } from "../webhooks/webhooks";
import { extractZip } from "../assets/zip-inspect";

export type RenderFunction = (options: RenderCompositionOptions) => Promise<RenderResult>;

type AbortReason = "timeout" | "lease_lost" | "shutdown";

class RenderAbort extends Error {
  constructor(readonly reason: AbortReason) {
    super(reason);
  }
}

const IDLE_POLL_MS = 200;
const PROGRESS_INTERVAL_MS = 500;

export class WorkerPool {
  private stopping = false;
  private readonly loops: Promise<void>[] = [];
  private readonly running = new Set<AbortController>();
  private wake: (() => void) | undefined;
  readonly owner = `worker-${process.pid}-${randomToken(6)}`;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly queue: JobQueue,
    private readonly render: RenderFunction,
  ) {}

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
    for (const renderId of await this.queue.collectExhausted()) {
      await this.ctx.db.transaction().execute(async (trx) => {
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
        if (updated) await enqueueWebhook(trx, updated, now);
      });
    }
  }

  private async runJob(lease: Lease): Promise<void> {
    const { ctx } = this;
    const render = await ctx.db
      .selectFrom("renders")
      .selectAll()
      .where("id", "=", lease.jobId)
      .executeTakeFirst();
    if (!render || render.deleted_ms !== null) {
      await this.queue.finish(lease, "failed", async () => {});
      return;
    }
    const asset = await ctx.db
      .selectFrom("assets")
      .selectAll()
      .where("id", "=", render.asset_id)
      .executeTakeFirst();
    const startedMs = render.started_ms ?? ctx.now();
    await ctx.db
      .updateTable("renders")
      .set({ status: "rendering", started_ms: startedMs, progress: 0 })
      .where("id", "=", render.id)
      .where("status", "in", ["queued", "rendering"])
      .execute();
    ctx.log.info({ renderId: render.id, attempt: lease.attempt }, "render started");

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
          (error: unknown) => ctx.log.warn({ err: error }, "heartbeat failed"),
        );
      },
      Math.max(250, (ctx.config.leaseSeconds * 1000) / 3),
    );
    const workDir = join(ctx.config.dataDir, "work", `${render.id}-${lease.attempt}`);
    let lastProgress = 0;
    const storedKeys: string[] = [];
    try {
      if (!asset?.storage_key) throw new Error(`the project asset ${render.asset_id} is missing`);
      await rm(workDir, { recursive: true, force: true });
      const local = await ctx.store.toLocalFile(asset.storage_key);
      try {
        await extractZip(local.path, join(workDir, "project"));
      } finally {
        await local.release();
      }
      const output = join(workDir, "out", `video.${render.format}`);
      const result = await this.render({
        projectDir: join(workDir, "project"),
        composition: render.composition,
        output,
        fps: render.fps,
        quality: render.quality as Quality,
        format: render.format as OutputFormat,
        resolution: render.resolution as Resolution,
        aspectRatio: render.aspect_ratio as AspectRatio,
        variables: JSON.parse(render.variables_json) as Record<string, unknown>,
        strictVariables: render.strict_variables === 1,
        workers: 1,
        allowNetwork: ctx.config.allowPageNetwork,
        thumbnail: true,
        signal: controller.signal,
        onProgress: (progress) => {
          const now = Date.now();
          if (now - lastProgress < PROGRESS_INTERVAL_MS || progress.framesTotal <= 0) return;
          lastProgress = now;
          const fraction = Math.min(0.99, progress.framesDone / progress.framesTotal);
          void ctx.db
            .updateTable("renders")
            .set({ progress: fraction })
            .where("id", "=", render.id)
            .where("status", "=", "rendering")
            .execute()
            .catch(() => undefined);
        },
      });
      if (controller.signal.aborted) throw controller.signal.reason;
      const prefix = `renders/${render.user_id}/${render.id}/${lease.attempt}`;
      const videoKey = `${prefix}/video.${render.format}`;
      await ctx.store.put(videoKey, createReadStream(result.outputPath));
      storedKeys.push(videoKey);
      let thumbnailKey: string | null = null;
      if (result.thumbnailPath) {
        thumbnailKey = `${prefix}/thumbnail.jpg`;
        await ctx.store.put(thumbnailKey, createReadStream(result.thumbnailPath));
        storedKeys.push(thumbnailKey);
      }
      const finished = await this.queue.finish(lease, "done", async (trx) => {
        const now = ctx.now();
        const cost = renderCostMilli(result.durationSeconds, render.resolution);
        const completed = await trx
          .updateTable("renders")
          .set({
            status: "completed",
            progress: 1,
            duration: result.durationSeconds,
            credits_charged_milli: cost,
            completed_ms: now,
            video_key: videoKey,
            thumbnail_key: thumbnailKey,
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
      });
      if (!finished) {
        // Lease lost or render deleted meanwhile: this attempt's files are orphans.
        for (const key of storedKeys) await ctx.store.delete(key);
      }
      ctx.log.info({ renderId: render.id, finished }, "render finished");
    } catch (error) {
      const reason =
        error instanceof RenderAbort
          ? error.reason
          : controller.signal.aborted
            ? (controller.signal.reason as RenderAbort).reason
            : undefined;
      for (const key of storedKeys) await ctx.store.delete(key);
      if (reason === "shutdown") {
        await this.queue.release(lease);
        await ctx.db
          .updateTable("renders")
          .set({ status: "queued", progress: 0 })
          .where("id", "=", render.id)
          .where("status", "=", "rendering")
          .execute();
        ctx.log.info({ renderId: render.id }, "render released for another worker (shutdown)");
      } else if (reason === "lease_lost") {
        ctx.log.warn({ renderId: render.id }, "render abandoned: lease lost or render deleted");
      } else {
        const failure =
          reason === "timeout"
            ? {
                code: "svc_render_timeout",
                message: `the render took longer than ${ctx.config.renderTimeoutSeconds} s`,
              }
            : isEngineError(error)
              ? {
                  code: error.code,
                  message: engineFailureMessage(error),
                }
              : { code: "svc_render_failed", message: "the render failed inside the service" };
        if (!isEngineError(error) && reason !== "timeout")
          ctx.log.error({ err: error, renderId: render.id }, "render failed");
        await this.fail(lease, render, failure);
      }
    } finally {
      clearTimeout(timeout);
      clearInterval(heartbeat);
      this.running.delete(controller);
      await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
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
      if (failed) await enqueueWebhook(trx, failed, now);
    });
  }
}
