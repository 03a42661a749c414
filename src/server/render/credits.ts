// Credits: the rule is creditsFor() in src/shared/credits.ts, charged once when a render
// completes (the charge happens in the same transaction as the completion, see queue.ts).
// Balances are kept in milli-credits so 1.5x stays exact.
import { creditsFor } from "../../shared/credits";
import type { Database } from "../db/database";
import { addCreditsMilli } from "../auth/account-repository";

export function toMilli(credits: number): number {
  return Math.round(credits * 1000);
}

export function fromMilli(milli: number): number {
  return milli / 1000;
}

/** Price of a finished render in milli-credits. */
export function renderCostMilli(durationSeconds: number, resolution: string): number {
  return toMilli(creditsFor(durationSeconds, resolution));
}

export async function addCredits(db: Database, userId: string, credits: number): Promise<number> {
  return fromMilli(await addCreditsMilli(db, userId, toMilli(credits)));
}
