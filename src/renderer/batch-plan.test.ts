import { describe, expect, it } from "vitest";
import type { BatchView, QueuedRenderView } from "../shared/ipc";
import { summarizeBatch } from "./batch-plan";

const batch = { rowCount: 4 } as BatchView;

function row(change: Partial<QueuedRenderView>): QueuedRenderView {
  return {
    status: "waiting",
    stage: "waiting",
    progress: 0,
    startedAt: undefined,
    ...change,
  } as QueuedRenderView;
}

describe("summarizeBatch", () => {
  it("counts rows by where they are and weighs progress by stage", () => {
    const summary = summarizeBatch(
      batch,
      [
        row({ status: "completed", stage: "download", progress: 1, startedAt: 0 }),
        row({ status: "running", stage: "rendering", progress: 0.5, startedAt: 0 }),
        row({ status: "running", stage: "queued", startedAt: 0 }),
        row({ status: "failed", stage: "rendering" }),
      ],
      20_000,
    );
    expect(summary).toMatchObject({ done: 1, rendering: 1, queued: 1, failed: 1, active: true });
    expect(summary.progress).toBeCloseTo((1 + 0.5 + 0.05) / 4);
    // 20 s for 38.75%: about 32 s for the rest.
    expect(summary.etaSeconds).toBe(32);
  });

  it("gives no ETA before the batch has moved, nor once nothing is left to run", () => {
    expect(summarizeBatch(batch, [row({})], 60_000).etaSeconds).toBeUndefined();
    const finished = summarizeBatch(
      batch,
      [row({ status: "completed", startedAt: 0 }), row({ status: "cancelled" })],
      60_000,
    );
    expect(finished).toMatchObject({ active: false, etaSeconds: undefined, done: 1, cancelled: 1 });
  });
});
