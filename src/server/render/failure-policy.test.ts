import { describe, expect, it } from "vitest";
import { EngineError } from "../../engine/errors";
import { decideJobEnd, type JobEnd, type JobTraits } from "./failure-policy";

const plain: JobTraits = { retryable: false, spare: false, requeuesRender: false };
const whole: JobTraits = { ...plain, requeuesRender: true };
const join: JobTraits = { ...plain, retryable: true };
const copy: JobTraits = { ...plain, spare: true };
const limits = { maxAttempts: 3, renderTimeoutSeconds: 600 };
const engineError = new EngineError(
  "page_error",
  "The composition's script threw: boom",
  "Fix it.",
);
const crash = new Error("disk full");

const rows: [string, JobEnd, number, JobTraits, string, string, Record<string, unknown>][] = [
  ["a finished job is done", { returned: "finished" }, 1, plain, "done", "completed", {}],
  ["a dropped job drops", { returned: "dropped" }, 1, plain, "drop", "abandoned", {}],
  ["a superseded job drops", { returned: "superseded" }, 1, plain, "drop", "superseded", {}],
  [
    "shutdown gives a whole render back and requeues it",
    { threw: crash, abort: "shutdown" },
    1,
    whole,
    "release",
    "released",
    { requeueRender: true },
  ],
  [
    "shutdown gives a chunk back without requeueing the render",
    { threw: crash, abort: "shutdown" },
    1,
    plain,
    "release",
    "released",
    { requeueRender: false },
  ],
  [
    "a copy overtaken by its twin finishes done",
    { threw: crash, abort: "superseded" },
    1,
    copy,
    "finish",
    "superseded",
    { state: "done" },
  ],
  ["a cancel drops", { threw: crash, abort: "cancelled" }, 1, plain, "drop", "abandoned", {}],
  ["a lost lease drops", { threw: crash, abort: "lease_lost" }, 1, join, "drop", "abandoned", {}],
  [
    "a failed join with attempts left retries",
    { threw: crash, abort: undefined },
    2,
    join,
    "retry",
    "retried",
    {},
  ],
  [
    "a failed join on its last attempt fails the render",
    { threw: engineError, abort: undefined },
    3,
    join,
    "fail",
    "failed",
    {
      failure: {
        code: "svc_join_failed",
        message: expect.stringContaining("all 3 attempts (The composition's script threw: boom)"),
      },
    },
  ],
  [
    "a timed-out join is not retried",
    { threw: crash, abort: "timeout" },
    1,
    join,
    "fail",
    "failed",
    { failure: { code: "svc_render_timeout", message: "the render took longer than 600 s" } },
  ],
  [
    "a failed speculative copy fails nothing",
    { threw: engineError, abort: undefined },
    1,
    copy,
    "finish",
    "failed",
    { state: "failed" },
  ],
  [
    "an engine error fails the render with its code",
    { threw: engineError, abort: undefined },
    1,
    plain,
    "fail",
    "failed",
    { failure: { code: "page_error", message: expect.stringContaining("script threw: boom") } },
  ],
  [
    "anything else fails the render without its details",
    { threw: crash, abort: undefined },
    3,
    whole,
    "fail",
    "failed",
    { failure: { code: "svc_render_failed", message: "the render failed inside the service" } },
  ],
];

describe("the worker's failure policy", () => {
  it.each(rows)("%s", (_name, end, attempt, traits, action, outcome, more) => {
    expect(decideJobEnd(end, attempt, traits, limits)).toMatchObject({ action, outcome, ...more });
  });

  it("logs an unexpected failure with its error, and an engine error not at all", () => {
    const unexpected = decideJobEnd({ threw: crash, abort: undefined }, 1, plain, limits);
    expect(unexpected.log).toEqual({ level: "error", message: "render failed", withError: true });
    expect(decideJobEnd({ threw: engineError, abort: undefined }, 1, plain, limits).log).toBe(
      undefined,
    );
  });
});
