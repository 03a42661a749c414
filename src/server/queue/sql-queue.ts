// The render job queue (`JobQueue`), durable in the database. A worker claims the oldest queued
// job (or one whose lease expired) with a fresh lease token and renews it by heartbeat; only the
// holder of the current token can finish the job, so a worker that lost its lease (it died, or
// was presumed dead) can never complete or charge a render a second time. Claiming counts an
// attempt; a job whose lease expires after its last attempt is failed instead of reclaimed.
import type { Transaction } from "kysely";
import type { Database } from "../db/database";
import type { DB } from "../db/schema";
import { randomToken } from "../ids";
import type { JobQueue, Lease } from "./job-queue";
import {
  failExhausted,
  failJobsOfRender,
  findClaimable,
  finishUnderLease,
  leaseClaimable,
  insertJob,
  NO_LEASE,
  RELEASED,
  renewLease,
  updateUnderLease,
} from "./job-repository";

export class SqlJobQueue implements JobQueue {
  constructor(
    private readonly db: Database,
    private readonly options: { leaseSeconds: number; maxAttempts: number; now?: () => number },
  ) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  async enqueue(trx: Transaction<DB> | Database, jobId: string): Promise<void> {
    await insertJob(trx, jobId, this.now());
  }

  async claim(owner: string): Promise<Lease | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const now = this.now();
      const candidate = await findClaimable(trx, now, this.options.maxAttempts);
      if (!candidate) return undefined;
      const token = randomToken(24);
      const expiresMs = now + this.options.leaseSeconds * 1000;
      if (!(await leaseClaimable(trx, candidate, { owner, token, expiresMs }))) return undefined;
      return { jobId: candidate.id, token, attempt: candidate.attempts + 1 };
    });
  }

  async heartbeat(lease: Lease): Promise<boolean> {
    return renewLease(this.db, lease, this.now() + this.options.leaseSeconds * 1000);
  }

  async finish(
    lease: Lease,
    state: "done" | "failed",
    finish: (trx: Transaction<DB>) => Promise<void>,
  ): Promise<boolean> {
    return finishUnderLease(this.db, lease, state, finish);
  }

  async release(lease: Lease): Promise<void> {
    await updateUnderLease(this.db, lease, RELEASED);
  }

  async retry(lease: Lease): Promise<boolean> {
    return updateUnderLease(this.db, lease, { state: "queued", ...NO_LEASE });
  }

  async collectExhausted(
    onExhausted?: (trx: Transaction<DB>, jobId: string) => Promise<void>,
  ): Promise<string[]> {
    return this.db.transaction().execute(async (trx) => {
      const jobIds = await failExhausted(trx, this.now(), this.options.maxAttempts);
      for (const jobId of jobIds) await onExhausted?.(trx, jobId);
      return jobIds;
    });
  }

  async cancelRender(trx: Transaction<DB> | Database, renderId: string): Promise<void> {
    await failJobsOfRender(trx, renderId);
  }

  async close(): Promise<void> {}
}
