// Every query of the webhook outbox (webhook_deliveries): a delivery queued in the transaction
// that finished its render, the due ones read by the dispatcher, a claim that keeps a second
// dispatcher from sending one at the same time, and each attempt's outcome.
import type { Kysely, Transaction } from "kysely";
import type { DB, RendersTable } from "../db/schema";

type Db = Kysely<DB>;

/** A pending delivery of `event` to the render's callback URL, due `now`. */
export async function insertDelivery(
  trx: Transaction<DB>,
  render: RendersTable & { callback_url: string },
  event: string,
  outputIdx: number | null,
  now: number,
): Promise<void> {
  await trx
    .insertInto("webhook_deliveries")
    .values({
      render_id: render.id,
      user_id: render.user_id,
      url: render.callback_url,
      event,
      state: "pending",
      attempts: 0,
      next_attempt_ms: now,
      last_error: null,
      created_ms: now,
      delivered_ms: null,
      output_idx: outputIdx,
    })
    .execute();
}

/** Pending deliveries due by `now`, the most overdue first, `limit` at most. */
export function loadDueDeliveries(db: Db, now: number, limit: number) {
  return db
    .selectFrom("webhook_deliveries")
    .selectAll()
    .where("state", "=", "pending")
    .where("next_attempt_ms", "<=", now)
    .orderBy("next_attempt_ms")
    .limit(limit)
    .execute();
}

/**
 * Claims a due delivery by moving its next attempt to `retryAtMs` (past this attempt's timeout);
 * false when another dispatcher claimed it first (its next attempt is no longer the one read).
 */
export async function claimDelivery(
  db: Db,
  delivery: { id: number; next_attempt_ms: number },
  retryAtMs: number,
): Promise<boolean> {
  const claimed = await db
    .updateTable("webhook_deliveries")
    .set({ next_attempt_ms: retryAtMs })
    .where("id", "=", delivery.id)
    .where("next_attempt_ms", "=", delivery.next_attempt_ms)
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) === 1;
}

export async function markDelivered(
  db: Db,
  deliveryId: number,
  attempts: number,
  now: number,
): Promise<void> {
  await db
    .updateTable("webhook_deliveries")
    .set({ state: "delivered", attempts, delivered_ms: now, last_error: null })
    .where("id", "=", deliveryId)
    .execute();
}

/** An attempt failed: tried again at `nextAttemptMs`, or given up (`failed`). */
export async function markAttemptFailed(
  db: Db,
  deliveryId: number,
  outcome: { failed: boolean; attempts: number; error: string; nextAttemptMs: number },
): Promise<void> {
  await db
    .updateTable("webhook_deliveries")
    .set({
      state: outcome.failed ? "failed" : "pending",
      attempts: outcome.attempts,
      last_error: outcome.error.slice(0, 500),
      next_attempt_ms: outcome.nextAttemptMs,
    })
    .where("id", "=", deliveryId)
    .execute();
}
