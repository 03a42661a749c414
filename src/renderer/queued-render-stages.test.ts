import { describe, expect, it } from "vitest";
import type { QueuedRenderView } from "../shared/ipc";
import { stageIndex, stageLabel, stagesOf } from "./queued-render-stages";

const queuedRender = (change: Partial<QueuedRenderView>): QueuedRenderView =>
  ({
    status: "running",
    stage: "upload",
    source: { type: "dir", dir: "/p", composition: "index.html" },
    ...change,
  }) as QueuedRenderView;

describe("a queued render's stages", () => {
  it("on this computer are Preparing, Rendering and Saving", () => {
    const uploading = queuedRender({ stage: "upload" });
    const stages = stagesOf(uploading, true);
    expect(stages.map((s) => s.label)).toEqual(["Preparing", "Rendering", "Saving"]);
    expect(stageLabel(uploading, true)).toBe("Preparing");
    expect(stageIndex(queuedRender({ stage: "queued" }), stages, true)).toBe(0);
    expect(stageIndex(queuedRender({ stage: "rendering" }), stages, true)).toBe(1);
    expect(stageLabel(queuedRender({ stage: "download" }), true)).toBe("Saving");
  });

  it("on a service name each step, and a download from History only downloads", () => {
    expect(stagesOf(queuedRender({}), false).map((s) => s.label)).toEqual([
      "Zipping",
      "Uploading",
      "Queued",
      "Rendering",
      "Downloading",
    ]);
    const fromHistory = queuedRender({
      source: { type: "render", renderId: "rndr_x" },
      stage: "download",
    });
    expect(stagesOf(fromHistory, true).map((s) => s.label)).toEqual(["Saving"]);
    expect(stageLabel(queuedRender({ status: "cancelled" }), true)).toBe("Cancelled");
  });
});
