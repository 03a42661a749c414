// The render job queue (`JobQueue`), durable in the database. A worker claims the oldest queued
// job (or one whose lease expired) with a fresh lease token and renews it by heartbeat; only the
// holder of the current token can finish the job, so a worker that lost its lease (it died, or
// was presumed dead) can never complete or charge a render a second time. Claiming counts an
// attempt; a job whose lease expires after its last attempt is failed instead of reclaimed.
import { sql, type Transaction } from "kysely";
import type { Database } from "../db/database";
import type { DB } from "../db/schema";
import { randomToken } from "../ids";
import type { JobQueue, Lease } from "./job-queue";

export class SqlJobQueue implements JobQueue {
  constructor(
    private readonly db: Database,
    private readonly options: { leaseSeconds: number; maxAttempts: number; now?: () => number },
  ) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  async enqueue(trx: Transaction<DB> | Database, jobId: string): Promise<void> {
    await trx
      .insertInto("jobs")
      .values({
        id: jobId,
        state: "queued",
        attempts: 0,
        lease_owner: null,
        lease_token: null,
        lease_expires_ms: null,
        created_ms: this.now(),
        queue_ref: null,
      })
      .execute();
  }

  async claim(owner: string): Promise<Lease | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const now = this.now();
      const candidate = await trx
        .selectFrom("jobs")
        .select(["id", "attempts"])
        .where((eb) =>
          eb.or([
            eb("state", "=", "queued"),
            eb.and([eb("state", "=", "active"), eb("lease_expires_ms", "<", now)]),
          ]),
        )
        .where("attempts", "<", this.options.maxAttempts)
        .orderBy("created_ms")
        .orderBy("id")
        .limit(1)
        .executeTakeFirst();
      if (!candidate) return undefined;
      const token = randomToken(24);
      const updated = await trx
        .updateTable("jobs")
        .set({
          state: "active",
          attempts: candidate.attempts + 1,
          lease_owner: owner,
          lease_token: token,
          lease_expires_ms: now + this.options.leaseSeconds * 1000,
        })
        .where("id", "=", candidate.id)
        .where("attempts", "=", candidate.attempts)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return undefined;
      return { jobId: candidate.id, token, attempt: candidate.attempts + 1 };
    });
  }

  async heartbeat(lease: Lease): Promise<boolean> {
    const updated = await this.db
      .updateTable("jobs")
      .set({ lease_expires_ms: this.now() + this.options.leaseSeconds * 1000 })
      .where("id", "=", lease.jobId)
      .where("state", "=", "active")
      .where("lease_token", "=", lease.token)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) === 1;
  }

  async finish(
    lease: Lease,
    state: "done" | "failed",
    finish: (trx: Transaction<DB>) => Promise<void>,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable("jobs")
        .set({ state, lease_owner: null, lease_token: null, lease_expires_ms: null })
        .where("id", "=", lease.jobId)
        .where("state", "=", "active")
        .where("lease_token", "=", lease.token)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false;
      await finish(trx);
      return true;
    });
  }

  async release(lease: Lease): Promise<void> {
    await this.db
      .updateTable("jobs")
      .set({
        state: "queued",
        attempts: sql<number>`attempts - 1`,
        lease_owner: null,
        lease_token: null,
        lease_expires_ms: null,
      })
      .where("id", "=", lease.jobId)
      .where("state", "=", "active")
      .where("lease_token", "=", lease.token)
      .execute();
  }

  async retry(lease: Lease): Promise<boolean> {
    const updated = await this.db
      .updateTable("jobs")
      .set({ state: "queued", lease_owner: null, lease_token: null, lease_expires_ms: null })
      .where("id", "=", lease.jobId)
      .where("state", "=", "active")
      .where("lease_token", "=", lease.token)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) === 1;
  }

  async collectExhausted(
    onExhausted?: (trx: Transaction<DB>, jobId: string) => Promise<void>,
  ): Promise<string[]> {
    return this.db.transaction().execute(async (trx) => {
      const rows = await trx
        .updateTable("jobs")
        .set({ state: "failed", lease_owner: null, lease_token: null, lease_expires_ms: null })
        .where("state", "=", "active")
        .where("lease_expires_ms", "<", this.now())
        .where("attempts", ">=", this.options.maxAttempts)
        .returning("id")
        .execute();
      for (const row of rows) await onExhausted?.(trx, row.id);
      return rows.map((row) => row.id);
    });
  }

  async cancelRender(trx: Transaction<DB> | Database, renderId: string): Promise<void> {
    await trx
      .updateTable("jobs")
      .set({ state: "failed", lease_owner: null, lease_token: null, lease_expires_ms: null })
      .where((eb) => eb.or([eb("id", "=", renderId), eb("id", "like", `${renderId}:%`)]))
      .where("state", "in", ["queued", "active"])
      .execute();
  }

  async close(): Promise<void> {}
}
