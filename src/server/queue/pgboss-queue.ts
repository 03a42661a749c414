// The job queue of the scale-out shape: pg-boss on the service's PostgreSQL. pg-boss carries the
// work: delivery to one worker at a time on any machine, retries with a delay, its own expiry as a
// backstop, a dead-letter queue for jobs that used up their retries, and cancellation. The `jobs`
// table keeps what pg-boss does not have: a lease with a heartbeat (so a dead worker is noticed in
// seconds, not at the job's expiry) and a fencing token that a worker must still hold to finish a
// job, in the same transaction as the render's completion and charge — pg-boss's own completion
// goes into that transaction too. A worker presumed dead that comes back can neither complete nor
// charge anything.
import { CompiledQuery, type Transaction } from "kysely";
import PgBoss from "pg-boss";
import type { Database } from "../db/database";
import { withStartupLock } from "../db/postgres";
import type { DB } from "../db/schema";
import { randomToken } from "../ids";
import { parseJobId, type JobQueue, type Lease } from "./job-queue";
import {
  failJob,
  failJobsOfRender,
  finishUnderLease,
  insertJob,
  leaseDelivered,
  loadExpiredLeases,
  setQueueRef,
  takeBackExpired,
  NO_LEASE,
  RELEASED,
  renewLease,
  updateUnderLease,
} from "./job-repository";

export const RENDER_QUEUE = "svc-render";

/**
 * pg-boss hands out the highest priority first, then the oldest. A render's chunks are enqueued in
 * one transaction (one created_on), so without a priority they went out in id order, i.e. at
 * random; chunk n gets -n, so a render's chunks go out in order and a worker's warm page
 * (engine/page-pool.ts) usually stands at the next chunk's first frame. Renders' chunks of the
 * same index interleave; whole renders and joins (0) go first, and a straggler's speculative copy
 * (1) before them: the render it belongs to waits for nothing else.
 */
function priorityOf(jobId: string): number {
  const job = parseJobId(jobId);
  if (job.kind !== "chunk") return 0;
  return job.copy ? 1 : -job.chunk;
}
export const DEAD_LETTER_QUEUE = "svc-render-dead";

interface Payload {
  jobId: string;
}

export interface PgBossQueueOptions {
  leaseSeconds: number;
  maxAttempts: number;
  /** pg-boss's own expiry of a delivery that nobody finished (the lease notices sooner). */
  expireInSeconds: number;
  /** Seconds before a failed delivery is offered again. */
  retryDelaySeconds?: number;
  now?: () => number;
}

/** pg-boss's database hook, run on a Kysely transaction so its SQL commits with ours. */
function inTransaction(trx: Transaction<DB> | Database): PgBoss.Db {
  return {
    async executeSql(text: string, values: unknown[]) {
      const result = await trx.executeQuery(CompiledQuery.raw(text, values));
      return { rows: result.rows as unknown[] as never[] };
    },
  };
}

/**
 * pg-boss's complete, run on `trx`. pg-boss 10 reads complete's third argument as the jobs' output
 * whatever its typings say (they also offer the connection options third): given there, `{ db }`
 * was stored as output and the completion ran on pg-boss's own pool, outside the transaction.
 */
async function complete(
  boss: PgBoss,
  trx: Transaction<DB>,
  queue: string,
  refs: string[],
  output: object,
): Promise<void> {
  const asRun = boss.complete as (
    name: string,
    ids: string[],
    data: object,
    options: PgBoss.ConnectionOptions,
  ) => Promise<unknown>;
  await asRun.call(boss, queue, refs, output, { db: inTransaction(trx) });
}

export class PgBossJobQueue implements JobQueue {
  private constructor(
    private readonly db: Database,
    private readonly boss: PgBoss,
    private readonly options: PgBossQueueOptions,
  ) {}

  /** Connects pg-boss to the database at `url` (installing its schema once) and makes the queues. */
  static async start(
    url: string,
    db: Database,
    options: PgBossQueueOptions,
    onError: (error: Error) => void,
  ): Promise<PgBossJobQueue> {
    const boss = new PgBoss({
      connectionString: url,
      schema: "pgboss",
      application_name: "svc-queue",
      max: 4,
      // Expiry and retention need someone to run maintenance; every process may, pg-boss keeps
      // it to one at a time.
      supervise: true,
      maintenanceIntervalSeconds: 30,
    });
    boss.on("error", onError);
    try {
      // One process at a time installs pg-boss's schema and makes the queues (postgres.ts).
      await withStartupLock(url, async () => {
        await boss.start();
        await boss.createQueue(DEAD_LETTER_QUEUE).catch(ignoreExisting);
        await boss
          .createQueue(RENDER_QUEUE, {
            name: RENDER_QUEUE,
            retryLimit: Math.max(0, options.maxAttempts - 1),
            retryDelay: options.retryDelaySeconds ?? 1,
            expireInSeconds: options.expireInSeconds,
            deadLetter: DEAD_LETTER_QUEUE,
          })
          .catch(ignoreExisting);
      });
    } catch (error) {
      // A started pg-boss keeps timers and connections that would keep the failed process alive.
      await boss.stop({ graceful: false, close: true, wait: true }).catch(() => undefined);
      throw error;
    }
    return new PgBossJobQueue(db, boss, options);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  async enqueue(trx: Transaction<DB> | Database, jobId: string): Promise<void> {
    const ref = await this.boss.send(RENDER_QUEUE, { jobId } satisfies Payload, {
      db: inTransaction(trx),
      priority: priorityOf(jobId),
    });
    await insertJob(trx, jobId, this.now(), ref);
  }

  async claim(owner: string): Promise<Lease | undefined> {
    for (;;) {
      // Taking the delivery and writing our lease commit together: a process that dies between
      // them would otherwise leave the pg-boss job active with no lease, until pg-boss's expiry.
      const outcome = await this.db.transaction().execute(async (trx) => {
        const [delivery] = await this.boss.fetch<Payload>(RENDER_QUEUE, {
          batchSize: 1,
          db: inTransaction(trx),
        });
        if (!delivery) return "empty" as const;
        const token = randomToken(24);
        const attempt = await leaseDelivered(trx, delivery.data.jobId, {
          owner,
          token,
          expiresMs: this.now() + this.options.leaseSeconds * 1000,
          queueRef: delivery.id,
        });
        if (attempt !== undefined) {
          return { jobId: delivery.data.jobId, token, attempt, ref: delivery.id };
        }
        // Finished or cancelled meanwhile: the delivery is stale.
        await complete(this.boss, trx, RENDER_QUEUE, [delivery.id], { stale: true });
        return "stale" as const;
      });
      if (outcome === "empty") return undefined;
      if (outcome !== "stale") return outcome;
    }
  }

  async heartbeat(lease: Lease): Promise<boolean> {
    return renewLease(this.db, lease, this.now() + this.options.leaseSeconds * 1000);
  }

  async finish(
    lease: Lease,
    state: "done" | "failed",
    finish: (trx: Transaction<DB>) => Promise<void>,
  ): Promise<boolean> {
    return finishUnderLease(this.db, lease, state, async (trx) => {
      await finish(trx);
      // A render that failed for good is finished work too: no retry.
      if (lease.ref) await complete(this.boss, trx, RENDER_QUEUE, [lease.ref], { finished: state });
    });
  }

  async release(lease: Lease): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      if (!(await updateUnderLease(trx, lease, RELEASED))) return;
      // Hand the work back without spending one of pg-boss's retries: a new delivery.
      if (lease.ref) await complete(this.boss, trx, RENDER_QUEUE, [lease.ref], { released: true });
      const ref = await this.boss.send(RENDER_QUEUE, { jobId: lease.jobId } satisfies Payload, {
        db: inTransaction(trx),
        priority: priorityOf(lease.jobId),
      });
      await setQueueRef(trx, lease.jobId, ref);
    });
  }

  async retry(lease: Lease, reason: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      if (!(await updateUnderLease(trx, lease, { state: "queued", ...NO_LEASE }))) return false;
      // The delivery fails: pg-boss offers the job again after its retry delay, one retry spent.
      if (lease.ref) {
        await this.boss.fail(RENDER_QUEUE, lease.ref, { reason }, { db: inTransaction(trx) });
      }
      return true;
    });
  }

  /**
   * Two sweeps. A lease that ran out (its worker died) is taken back and its delivery failed, in
   * one transaction, so pg-boss offers it again after the retry delay, or, with no retries left,
   * moves it to the dead letter queue; what is there is marked failed and returned, again in one
   * transaction with taking it off that queue. A sweep that dies half way leaves nothing half done
   * (a job taken back without a live delivery would wait for pg-boss's expiry).
   */
  async collectExhausted(
    onExhausted?: (trx: Transaction<DB>, jobId: string) => Promise<void>,
  ): Promise<string[]> {
    const now = this.now();
    const expired = await loadExpiredLeases(this.db, now);
    for (const job of expired) {
      await this.db.transaction().execute(async (trx) => {
        // Not taken when renewed since the select: the holder is alive after all.
        const taken = await takeBackExpired(trx, job, now);
        if (taken && job.queue_ref) {
          await this.boss.fail(
            RENDER_QUEUE,
            job.queue_ref,
            { reason: "lease expired" },
            { db: inTransaction(trx) },
          );
        }
      });
    }
    return this.db.transaction().execute(async (trx) => {
      const dead = await this.boss.fetch<Payload>(DEAD_LETTER_QUEUE, {
        batchSize: 20,
        db: inTransaction(trx),
      });
      const exhausted: string[] = [];
      for (const delivery of dead) {
        if (await failJob(trx, delivery.data.jobId)) {
          exhausted.push(delivery.data.jobId);
          await onExhausted?.(trx, delivery.data.jobId);
        }
      }
      const refs = dead.map((delivery) => delivery.id);
      if (refs.length > 0) await complete(this.boss, trx, DEAD_LETTER_QUEUE, refs, { exhausted });
      return exhausted;
    });
  }

  async cancelRender(trx: Transaction<DB> | Database, renderId: string): Promise<void> {
    const cancelled = await failJobsOfRender(trx, renderId);
    const refs = cancelled.flatMap((job) => (job.queue_ref ? [job.queue_ref] : []));
    if (refs.length > 0) await this.boss.cancel(RENDER_QUEUE, refs, { db: inTransaction(trx) });
  }

  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, close: true, wait: true });
  }
}

function ignoreExisting(error: unknown): void {
  if (!/already exists/i.test(String(error))) throw error;
}
