// Every query of the `jobs` table that both queues keep (sql-queue.ts alone, pgboss-queue.ts
// beside pg-boss): a row per job with its state and the lease of the worker that holds it. Every
// change a worker makes to its job goes through updateUnderLease, guarded by the lease token, so a
// worker that lost its lease can change nothing; the claims and sweeps carry their own guards.
import { sql, type Transaction, type UpdateObject } from "kysely";
import type { Database } from "../db/database";
import type { DB } from "../db/schema";
import type { Lease } from "./job-queue";

type Db = Transaction<DB> | Database;

/** The lease columns of a job that no worker holds. */
export const NO_LEASE = { lease_owner: null, lease_token: null, lease_expires_ms: null } as const;

/** A new queued job's row; `queueRef` is the queue engine's id of its delivery (pg-boss). */
export async function insertJob(
  db: Db,
  jobId: string,
  createdMs: number,
  queueRef: string | null = null,
): Promise<void> {
  await db
    .insertInto("jobs")
    .values({
      id: jobId,
      state: "queued",
      attempts: 0,
      ...NO_LEASE,
      created_ms: createdMs,
      queue_ref: queueRef,
    })
    .execute();
}

/** Updates the job only while `lease` is its live lease; true when it was (the update ran). */
export async function updateUnderLease(
  db: Db,
  lease: Pick<Lease, "jobId" | "token">,
  set: UpdateObject<DB, "jobs">,
): Promise<boolean> {
  const updated = await db
    .updateTable("jobs")
    .set(set)
    .where("id", "=", lease.jobId)
    .where("state", "=", "active")
    .where("lease_token", "=", lease.token)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/** Renews the lease until `expiresMs`; false when the worker no longer holds it. */
export function renewLease(
  db: Db,
  lease: Pick<Lease, "jobId" | "token">,
  expiresMs: number,
): Promise<boolean> {
  return updateUnderLease(db, lease, { lease_expires_ms: expiresMs });
}

/**
 * Ends the job as `state` and runs `finish` (the render's completion and charge) in the same
 * transaction, only while `lease` is its live lease; false (nothing done) when it is not.
 */
export function finishUnderLease(
  db: Database,
  lease: Lease,
  state: "done" | "failed",
  finish: (trx: Transaction<DB>) => Promise<void>,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!(await updateUnderLease(trx, lease, { state, ...NO_LEASE }))) return false;
    await finish(trx);
    return true;
  });
}

/** The columns that hand a job back to the queue without spending an attempt. */
export const RELEASED = {
  state: "queued",
  attempts: sql<number>`attempts - 1`,
  ...NO_LEASE,
} as const;

/** The queued or running jobs of a render (the whole render, its chunks and join), now failed. */
export async function failJobsOfRender(
  db: Db,
  renderId: string,
): Promise<Array<{ queue_ref: string | null }>> {
  return db
    .updateTable("jobs")
    .set({ state: "failed", ...NO_LEASE })
    .where((eb) => eb.or([eb("id", "=", renderId), eb("id", "like", `${renderId}:%`)]))
    .where("state", "in", ["queued", "active"])
    .returning("queue_ref")
    .execute();
}

/** The job the SQL queue hands out next: the oldest queued one, or one whose lease ran out. */
export function findClaimable(
  trx: Transaction<DB>,
  now: number,
  maxAttempts: number,
): Promise<{ id: string; attempts: number } | undefined> {
  return trx
    .selectFrom("jobs")
    .select(["id", "attempts"])
    .where((eb) =>
      eb.or([
        eb("state", "=", "queued"),
        eb.and([eb("state", "=", "active"), eb("lease_expires_ms", "<", now)]),
      ]),
    )
    .where("attempts", "<", maxAttempts)
    .orderBy("created_ms")
    .orderBy("id")
    .limit(1)
    .executeTakeFirst();
}

/**
 * Leases the job found by findClaimable to `owner`, one attempt counted; false when another
 * worker claimed it in between (its attempts changed).
 */
export async function leaseClaimable(
  trx: Transaction<DB>,
  job: { id: string; attempts: number },
  lease: { owner: string; token: string; expiresMs: number },
): Promise<boolean> {
  const updated = await trx
    .updateTable("jobs")
    .set({
      state: "active",
      attempts: job.attempts + 1,
      lease_owner: lease.owner,
      lease_token: lease.token,
      lease_expires_ms: lease.expiresMs,
    })
    .where("id", "=", job.id)
    .where("attempts", "=", job.attempts)
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) === 1;
}

/**
 * Leases a job pg-boss delivered (`queueRef`) to `owner`, one attempt counted; the attempt, or
 * undefined when the job was finished or cancelled meanwhile (the delivery is stale).
 */
export async function leaseDelivered(
  trx: Transaction<DB>,
  jobId: string,
  lease: { owner: string; token: string; expiresMs: number; queueRef: string },
): Promise<number | undefined> {
  const claimed = await trx
    .updateTable("jobs")
    .set((eb) => ({
      state: "active",
      attempts: eb("attempts", "+", 1),
      lease_owner: lease.owner,
      lease_token: lease.token,
      lease_expires_ms: lease.expiresMs,
      queue_ref: lease.queueRef,
    }))
    .where("id", "=", jobId)
    .where("state", "in", ["queued", "active"])
    .returning("attempts")
    .executeTakeFirst();
  return claimed?.attempts;
}

/** The queue engine's id of the job's current delivery (pg-boss). */
export async function setQueueRef(db: Db, jobId: string, queueRef: string | null): Promise<void> {
  await db.updateTable("jobs").set({ queue_ref: queueRef }).where("id", "=", jobId).execute();
}

/** Jobs whose lease ran out before `now` (their worker died, or was presumed dead). */
export function loadExpiredLeases(db: Db, now: number) {
  return db
    .selectFrom("jobs")
    .select(["id", "lease_token", "queue_ref"])
    .where("state", "=", "active")
    .where("lease_expires_ms", "<", now)
    .execute();
}

/**
 * Takes back a job whose lease ran out, queued again; false when it was renewed since it was read
 * (its holder is alive after all) or finished.
 */
export async function takeBackExpired(
  db: Db,
  job: { id: string; lease_token: string | null },
  now: number,
): Promise<boolean> {
  const taken = await db
    .updateTable("jobs")
    .set({ state: "queued", ...NO_LEASE })
    .where("id", "=", job.id)
    .where("state", "=", "active")
    .where("lease_token", "=", job.lease_token)
    .where("lease_expires_ms", "<", now)
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1;
}

/** Fails a job that is still queued or running; false when it had already ended. */
export async function failJob(db: Db, jobId: string): Promise<boolean> {
  const failed = await db
    .updateTable("jobs")
    .set({ state: "failed", ...NO_LEASE })
    .where("id", "=", jobId)
    .where("state", "in", ["queued", "active"])
    .executeTakeFirst();
  return Number(failed.numUpdatedRows) === 1;
}

/** Fails every job whose lease ran out after its last attempt (the SQL queue's sweep); their ids. */
export async function failExhausted(
  trx: Transaction<DB>,
  now: number,
  maxAttempts: number,
): Promise<string[]> {
  const rows = await trx
    .updateTable("jobs")
    .set({ state: "failed", ...NO_LEASE })
    .where("state", "=", "active")
    .where("lease_expires_ms", "<", now)
    .where("attempts", ">=", maxAttempts)
    .returning("id")
    .execute();
  return rows.map((row) => row.id);
}
