// The `jobs` table that both queues keep (sql-queue.ts alone, pg-boss-queue.ts beside pg-boss):
// a row per job with its state and the lease of the worker that holds it. Every change a worker
// makes to its job goes through updateUnderLease, guarded by the lease token, so a worker that
// lost its lease can change nothing; the other helpers are the table's shared writes.
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
