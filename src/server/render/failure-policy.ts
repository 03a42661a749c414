// The worker's failure policy: what follows a job, from how it ended (the result it returned, or
// the error it threw and why its signal was aborted) and its attempt. Pure: no queue, database or
// clock, so every row of the policy is a unit test (failure-policy.test.ts). The worker
// (worker.ts) carries the decision out and knows no job semantics; what differs between kinds of
// job reaches here as traits (job-kinds.ts).
import { isEngineError } from "../../engine/contract";
import type { JobOutcome } from "../metrics";
import type { JobResult } from "./attempt";
import { engineFailureMessage, joinFailureMessage } from "./failure-hints";

/** Why a running job's signal was aborted (worker.ts). */
export type AbortReason = "timeout" | "lease_lost" | "shutdown" | "cancelled" | "superseded";

/** How a job ended: the result it returned, or what it threw and why it was aborted (if it was). */
export type JobEnd = { returned: JobResult } | { threw: unknown; abort: AbortReason | undefined };

/** What the policy needs to know of a kind of job (job-kinds.ts). */
export interface JobTraits {
  /**
   * A failure not caused by an abort is the service's, not the customer's (a join: every chunk is
   * rendered and stored), so the job is offered again until its attempts run out.
   */
  retryable: boolean;
  /** A spare (a speculative chunk copy): its failure fails nothing, the first run goes on. */
  spare: boolean;
  /** Given back at shutdown, the render itself goes back to "queued" (a whole render). */
  requeuesRender: boolean;
}

export interface PolicyLimits {
  maxAttempts: number;
  renderTimeoutSeconds: number;
}

export type LogLine = { level: "info" | "warn" | "error"; message: string; withError: boolean };

/**
 * What the worker does next. Every decision but "done" first removes what the attempt stored.
 * - done: the job finished and recorded its work;
 * - drop: nothing more (the job ended elsewhere: lost lease, cancel, deleted render);
 * - release: the lease is given back for another worker (shutdown);
 * - finish: the lease is finished as done or failed, the render untouched;
 * - retry: the job is offered again;
 * - fail: the render fails with `failure` (and the lease with it).
 */
export type Decision = { outcome: JobOutcome; log?: LogLine } & (
  | { action: "done" }
  | { action: "drop" }
  | { action: "release"; requeueRender: boolean }
  | { action: "finish"; state: "done" | "failed" }
  | { action: "retry" }
  | { action: "fail"; failure: { code: string; message: string } }
);

export function decideJobEnd(
  end: JobEnd,
  attempt: number,
  traits: JobTraits,
  limits: PolicyLimits,
): Decision {
  if ("returned" in end) {
    if (end.returned === "finished") return { action: "done", outcome: "completed" };
    // Lease lost or render deleted meanwhile: this attempt's files are orphans.
    return { action: "drop", outcome: end.returned === "superseded" ? "superseded" : "abandoned" };
  }
  const { threw: error, abort } = end;
  if (abort === "shutdown") {
    return {
      action: "release",
      requeueRender: traits.requeuesRender,
      outcome: "released",
      log: { level: "info", message: "released for another worker (shutdown)", withError: false },
    };
  }
  if (abort === "superseded") {
    // Like a cancel, but only of this copy: the job ends here, the render goes on.
    return {
      action: "finish",
      state: "done",
      outcome: "superseded",
      log: {
        level: "info",
        message: "chunk abandoned: its other copy finished it first",
        withError: false,
      },
    };
  }
  if (abort === "cancelled") {
    return {
      action: "drop",
      outcome: "abandoned",
      log: {
        level: "info",
        message: "render abandoned: cancelled, deleted or failed elsewhere",
        withError: false,
      },
    };
  }
  if (abort === "lease_lost") {
    return {
      action: "drop",
      outcome: "abandoned",
      log: {
        level: "warn",
        message: "render abandoned: lease lost, render deleted or failed elsewhere",
        withError: false,
      },
    };
  }
  if (traits.retryable && abort === undefined) {
    // As a lost worker's job gets another attempt; the render fails only when none is left.
    if (attempt < limits.maxAttempts) {
      return {
        action: "retry",
        outcome: "retried",
        log: { level: "warn", message: "join failed; offered again", withError: true },
      };
    }
    return {
      action: "fail",
      failure: { code: "svc_join_failed", message: joinFailureMessage(error, attempt) },
      outcome: "failed",
      log: { level: "error", message: "join failed on its last attempt", withError: true },
    };
  }
  if (traits.spare) {
    return {
      action: "finish",
      state: "failed",
      outcome: "failed",
      log: {
        level: "warn",
        message: "speculative chunk copy failed; the first run goes on",
        withError: true,
      },
    };
  }
  const failure =
    abort === "timeout"
      ? {
          code: "svc_render_timeout",
          message: `the render took longer than ${limits.renderTimeoutSeconds} s`,
        }
      : isEngineError(error)
        ? { code: error.code, message: engineFailureMessage(error) }
        : { code: "svc_render_failed", message: "the render failed inside the service" };
  return {
    action: "fail",
    failure,
    outcome: "failed",
    ...(!isEngineError(error) && abort !== "timeout"
      ? { log: { level: "error" as const, message: "render failed", withError: true } }
      : {}),
  };
}
