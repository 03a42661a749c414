import { describe, expect, it } from "vitest";
import type { JobView } from "../shared/ipc";
import { stageIndex, stageLabel, stagesOf } from "./job-stages";

const job = (change: Partial<JobView>): JobView =>
  ({
    status: "running",
    stage: "upload",
    source: { type: "dir", dir: "/p", composition: "index.html" },
    ...change,
  }) as JobView;

describe("a job's stages", () => {
  it("on this computer are Preparing, Rendering and Saving", () => {
    const uploading = job({ stage: "upload" });
    const stages = stagesOf(uploading, true);
    expect(stages.map((s) => s.label)).toEqual(["Preparing", "Rendering", "Saving"]);
    expect(stageLabel(uploading, true)).toBe("Preparing");
    expect(stageIndex(job({ stage: "queued" }), stages, true)).toBe(0);
    expect(stageIndex(job({ stage: "rendering" }), stages, true)).toBe(1);
    expect(stageLabel(job({ stage: "download" }), true)).toBe("Saving");
  });

  it("on a service name each step, and a download from History only downloads", () => {
    expect(stagesOf(job({}), false).map((s) => s.label)).toEqual([
      "Zipping",
      "Uploading",
      "Queued",
      "Rendering",
      "Downloading",
    ]);
    const fromHistory = job({ source: { type: "render", renderId: "rndr_x" }, stage: "download" });
    expect(stagesOf(fromHistory, true).map((s) => s.label)).toEqual(["Saving"]);
    expect(stageLabel(job({ status: "cancelled" }), true)).toBe("Cancelled");
  });
});
