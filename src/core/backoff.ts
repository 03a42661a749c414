// The client core's waits: the one sleep and backoff formula of src/node/wait.ts, with the core's
// "interrupted" error and its defaults (1 s doubling up to 30 s, plus up to 100 ms of jitter so
// many clients do not retry in step).
import { abortableSleep, backoffDelay, type Sleep } from "../node/index";
import { interruptedError } from "./errors";

export type { Sleep };

export const sleep: Sleep = abortableSleep(() => interruptedError());

/** Delay before retry number `attempt` (1-based): base, 2 x base, 4 x base ... capped. */
export function clientRetryDelay(attempt: number, baseMs = 1000, capMs = 30_000): number {
  return backoffDelay(attempt, { baseMs, capMs, jitterMs: Math.min(100, baseMs) });
}
