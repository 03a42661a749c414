// Waiting between attempts: exponential backoff with a little jitter, and a sleep that ends early
// (with an "interrupted" error) when the run's AbortSignal fires.
import { interruptedError } from "./errors";

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const sleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(interruptedError());
    const onAbort = () => {
      clearTimeout(timer);
      reject(interruptedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** Delay before retry number `attempt` (1-based): base, 2 x base, 4 x base ... capped. */
export function backoffDelay(attempt: number, baseMs = 1000, capMs = 30_000): number {
  return Math.min(baseMs * 2 ** (attempt - 1), capMs) + Math.random() * Math.min(100, baseMs);
}
