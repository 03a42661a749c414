// Waiting between attempts: one exponential backoff formula and one sleep that ends early when
// the caller's AbortSignal fires. The caller says what an interrupted wait throws, so the client
// core keeps its own "interrupted" error and the service its own.

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** A Sleep that rejects with `interrupted()` when the signal fires (before or during the wait). */
export function abortableSleep(interrupted: () => Error): Sleep {
  return (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(interrupted());
      const onAbort = () => {
        clearTimeout(timer);
        reject(interrupted());
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
}

/**
 * Delay before retry number `attempt` (1-based): base, 2 x base, 4 x base ... capped at `capMs`.
 * `jitterMs` (default none) adds up to that much at random, so many clients do not retry in step.
 */
export function backoffDelay(
  attempt: number,
  options: { baseMs: number; capMs: number; jitterMs?: number },
): number {
  const step = Math.min(options.baseMs * 2 ** Math.max(0, attempt - 1), options.capMs);
  return step + Math.random() * (options.jitterMs ?? 0);
}

/** `work`'s result, or `timedOut()` thrown when it takes longer than `ms`; the timer never outlives it. */
export async function withTimeout<T>(
  work: Promise<T>,
  ms: number,
  timedOut: () => Error,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(timedOut()), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
