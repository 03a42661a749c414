// The per-account cap on renders in progress (SVC_SERVER_MAX_RENDERS_PER_ACCOUNT): a render
// submitted while its account already has that many queued for a worker or rendering is stored
// `held` (status "queued", no job in the queue), and is admitted — its jobs queued — once the
// account is under the cap again, oldest first. Submit and admission take the account's row lock
// (PostgreSQL; SQLite has one writer anyway), so API and worker processes on one database never
// let an account past its cap together. Every process runs the admission loop; whichever gets the
// lock first admits.
import type { Transaction } from "kysely";
import type { ServiceContext } from "../context";
import type { DB } from "../db/schema";
import { jobIdOf, type JobQueue } from "../queue/job-queue";
import { lockAccount } from "../auth/account-repository";
import {
  accountsWithHeldRenders,
  loadHeldRenders,
  markAdmitted,
  rendersInProgress,
} from "./render-repository";
import { chunkIndexes } from "./chunk-repository";

const ADMIT_POLL_MS = 250;

/** Queues the jobs of a render: its chunks when it was planned in chunks, else one whole job. */
export async function enqueueRenderJobs(
  trx: Transaction<DB>,
  queue: JobQueue,
  renderId: string,
  chunks: number[],
  /** A render with several outputs: one job per output (job-output.ts). */
  outputs = 0,
): Promise<void> {
  if (outputs > 0) {
    for (let output = 0; output < outputs; output++) {
      await queue.enqueue(trx, jobIdOf({ kind: "output", renderId, output }));
    }
    return;
  }
  if (chunks.length === 0) {
    await queue.enqueue(trx, jobIdOf({ kind: "whole", renderId }));
    return;
  }
  for (const chunk of chunks) await queue.enqueue(trx, jobIdOf({ kind: "chunk", renderId, chunk }));
}

/** Admits held renders of accounts under the cap; how many were admitted. */
export async function admitHeldRenders(ctx: ServiceContext, queue: JobQueue): Promise<number> {
  const cap = ctx.config.maxRendersPerAccount;
  if (cap <= 0) return 0;
  let admitted = 0;
  for (const userId of await accountsWithHeldRenders(ctx.db)) {
    admitted += await ctx.db.transaction().execute(async (trx) => {
      await lockAccount(trx, userId, Boolean(ctx.config.databaseUrl));
      const free = cap - (await rendersInProgress(trx, userId));
      if (free <= 0) return 0;
      const next = await loadHeldRenders(trx, userId, free);
      for (const { id, output_count: outputs } of next) {
        await markAdmitted(trx, id);
        await enqueueRenderJobs(trx, queue, id, await chunkIndexes(trx, id), outputs);
        ctx.log.info({ renderId: id }, "render admitted (account under its cap)");
      }
      return next.length;
    });
  }
  return admitted;
}

/** Runs admitHeldRenders every 250 ms while the cap is on. */
export class RenderAdmission {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly queue: JobQueue,
  ) {}

  start(): void {
    if (this.ctx.config.maxRendersPerAccount <= 0) return;
    const tick = () => {
      this.running = admitHeldRenders(this.ctx, this.queue)
        .catch((error: unknown) => this.ctx.log.error({ err: error }, "render admission failed"))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, ADMIT_POLL_MS);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
