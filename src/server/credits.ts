// Credits: 1 credit per started second of output, x1.5 for 4k, charged once when a render
// completes (the charge happens in the same transaction as the completion, see queue.ts).
// Balances are kept in milli-credits so 1.5x stays exact.
import { CREDITS_PER_SECOND, FOUR_K_MULTIPLIER } from "../shared/limits";
import type { Database } from "./db/database";

export function toMilli(credits: number): number {
  return Math.round(credits * 1000);
}

export function fromMilli(milli: number): number {
  return milli / 1000;
}

/** Price of a finished render in milli-credits. */
export function renderCostMilli(durationSeconds: number, resolution: string): number {
  // Tolerate float noise from the engine (2.0000001 s is 2 seconds, not 3).
  const startedSeconds = Math.max(1, Math.ceil(durationSeconds - 1e-6));
  const multiplier = resolution === "4k" ? FOUR_K_MULTIPLIER : 1;
  return toMilli(startedSeconds * CREDITS_PER_SECOND * multiplier);
}

export async function addCredits(db: Database, userId: string, credits: number): Promise<number> {
  const row = await db
    .updateTable("users")
    .set((eb) => ({
      credits_remaining_milli: eb("credits_remaining_milli", "+", toMilli(credits)),
    }))
    .where("id", "=", userId)
    .returning("credits_remaining_milli")
    .executeTakeFirstOrThrow();
  return fromMilli(row.credits_remaining_milli);
}
