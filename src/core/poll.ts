// Waiting for a render: GET the record every `intervalMs` (default 10 s, the seed's cadence — a
// render takes tens of seconds, so faster polling mostly costs requests) until it completes or
// fails, or `maxWaitMs` runs out. Transient failures (dropped connections, 5xx, 429, a service
// restarting) are retried with backoff until the deadline; anything else ends the wait at once.
import type { RenderRecord } from "../shared/api";
import { TERMINAL_RENDER_STATUSES } from "../shared/api";
import { DEFAULT_MAX_WAIT_MINUTES, DEFAULT_POLL_INTERVAL_SECONDS } from "../shared/limits";
import { isTransient, type ApiClient } from "./api-client";
import { clientRetryDelay, sleep, type Sleep } from "./backoff";
import { ClientError } from "./errors";

export interface PollOptions {
  intervalMs?: number;
  maxWaitMs?: number;
  signal?: AbortSignal | undefined;
  /** Called with every record whose status or progress changed. */
  onUpdate?: (record: RenderRecord) => void;
  now?: () => number;
  sleep?: Sleep;
}

export async function pollUntilTerminal(
  client: ApiClient,
  renderId: string,
  options: PollOptions = {},
): Promise<RenderRecord> {
  const now = options.now ?? Date.now;
  const wait = options.sleep ?? sleep;
  const intervalMs = options.intervalMs ?? DEFAULT_POLL_INTERVAL_SECONDS * 1000;
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MINUTES * 60_000;
  const deadline = now() + maxWaitMs;
  let last: string | undefined;
  let failures = 0;
  for (;;) {
    let delay = intervalMs;
    try {
      const record = await client.getRender(renderId, options.signal);
      failures = 0;
      const key = `${record.status}:${record.progress}`;
      if (key !== last) {
        last = key;
        options.onUpdate?.(record);
      }
      if (TERMINAL_RENDER_STATUSES.includes(record.status)) return record;
    } catch (error) {
      if (!isTransient(error)) throw error;
      failures++;
      delay = Math.max(intervalMs, clientRetryDelay(failures));
    }
    const remaining = deadline - now();
    if (remaining <= 0) {
      throw new ClientError(
        "max_wait_exceeded",
        `Render ${renderId} did not finish within ${formatWait(maxWaitMs)}; it keeps running on the service.`,
        "It keeps running on the service: download it later, or wait longer.",
        { params: { renderId } },
      );
    }
    await wait(Math.min(delay, remaining), options.signal);
  }
}

function formatWait(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/** A failed render as an error: its failure code and message, and what to do. */
export function renderFailedError(record: RenderRecord): ClientError {
  return new ClientError(
    record.failure_code ?? "render_failed",
    `Render ${record.render_id} failed: ${record.failure_message ?? "no reason given"}${record.failure_code ? ` (${record.failure_code})` : ""}.`,
    "Fix the composition, then render again.",
    { params: { renderId: record.render_id, topic: "render_failed" } },
  );
}
