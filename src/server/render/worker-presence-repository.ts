// Every query of the worker_presence table, which says which render workers are alive: each
// worker process upserts its row (owner, job slots) every few seconds while it runs and deletes
// it when it stops; the API counts the slots seen recently to cut a new render into about two
// chunks per live worker (engine/plan.ts planChunks).
import type { Database } from "../db/database";

/** How often a worker says it is alive. */
export const PRESENCE_INTERVAL_MS = 5_000;
/** A worker not seen for this long is not counted (a crashed one drops out on its own). */
const LIVE_WITHIN_MS = 30_000;

export async function announceWorker(
  db: Database,
  owner: string,
  slots: number,
  now: number,
): Promise<void> {
  await db
    .insertInto("worker_presence")
    .values({ owner, slots, seen_ms: now })
    .onConflict((conflict) => conflict.column("owner").doUpdateSet({ slots, seen_ms: now }))
    .execute();
}

export async function forgetWorker(db: Database, owner: string): Promise<void> {
  await db.deleteFrom("worker_presence").where("owner", "=", owner).execute();
}

/** Job slots of the workers seen in the last 30 s (0 when none). */
export async function liveWorkerSlots(db: Database, now: number): Promise<number> {
  const row = await db
    .selectFrom("worker_presence")
    .select((eb) => eb.fn.sum<number>("slots").as("slots"))
    .where("seen_ms", ">", now - LIVE_WITHIN_MS)
    .executeTakeFirst();
  return Number(row?.slots ?? 0);
}
