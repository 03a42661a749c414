import { describe, expect, it } from "vitest";
import {
  errorLines,
  pairFrames,
  parseCpuSeconds,
  parseSsimStats,
  splitFrames,
  summaryLine,
  visibleDiffShare,
  worstFrame,
  type CompatRow,
} from "./compat";

describe("visibleDiffShare", () => {
  it("counts only pixels whose luma moved by more than the threshold", () => {
    const a = new Uint8Array([0, 100, 200, 50]);
    const b = new Uint8Array([24, 125, 150, 50]);
    // 0->24 is exactly the threshold (not visible), 100->125 and 200->150 are.
    expect(visibleDiffShare(a, b, 24)).toBe(0.5);
  });

  it("is zero for identical frames and refuses frames of different sizes", () => {
    const a = new Uint8Array(480 * 270).fill(7);
    expect(visibleDiffShare(a, a.slice())).toBe(0);
    expect(() => visibleDiffShare(a, new Uint8Array(10))).toThrow(/differ in size/);
  });
});

describe("frame pairing", () => {
  it("pairs frame n with frame n for every frame both videos have", () => {
    expect(pairFrames(3, 5)).toEqual([0, 1, 2]);
    expect(pairFrames(0, 5)).toEqual([]);
  });

  it("splits raw grey video into whole frames and drops a partial tail", () => {
    const frames = splitFrames(new Uint8Array([1, 1, 2, 2, 3]), 2);
    expect(frames.map((frame) => [...frame])).toEqual([
      [1, 1],
      [2, 2],
    ]);
  });

  it("reads per-frame SSIM from FFmpeg's stats file in frame order", () => {
    const stats = [
      "n:1 Y:0.990000 U:0.99 V:0.99 All:0.991000 (20.45)",
      "n:2 Y:0.500000 U:0.99 V:0.99 All:0.600000 (3.98)",
      "n:3 Y:1.000000 U:1 V:1 All:inf (inf)",
    ].join("\n");
    expect(parseSsimStats(stats)).toEqual([0.991, 0.6, 1]);
  });
});

describe("worstFrame", () => {
  it("is the most visibly different frame, or the lowest SSIM when none differs", () => {
    expect(worstFrame([0.99, 0.9, 0.95], [0, 0.001, 0.02])).toBe(2);
    expect(worstFrame([0.99, 0.9, 0.95], [0, 0, 0])).toBe(1);
  });
});

describe("report lines", () => {
  it("keeps the error lines of a failed render and drops progress", () => {
    const stderr = "Rendering 10%\nRendering 20%\nError: The composition's script threw: x\n";
    expect(errorLines(stderr)).toBe("Error: The composition's script threw: x");
  });

  it("counts passes only among compositions the reference renders", () => {
    const side = { exitCode: 0, error: undefined, wallSeconds: 1, frames: 10 };
    const rows: CompatRow[] = [
      { name: "a", svc: side, reference: side, passes: true, wallRatio: 0.4 },
      { name: "b", svc: side, reference: side, passes: false, wallRatio: 0.6 },
      { name: "c", svc: side, reference: { ...side, exitCode: 1, error: "boom" } },
    ];
    expect(summaryLine(rows)).toMatch(
      /^1\/2 of the compositions .* 1 the reference fails; median wall ratio svc\/reference 0\.50$/,
    );
  });

  it("reads GNU time's user and system seconds, and gives the median CPU ratio", () => {
    expect(parseCpuSeconds("12.50 3.25\n")).toBe(15.75);
    expect(parseCpuSeconds("Command exited with non-zero status 1\n2.00 1.00\n")).toBe(3);
    expect(parseCpuSeconds("")).toBeUndefined();
    const side = { exitCode: 0, error: undefined, wallSeconds: 1, frames: 10 };
    const rows: CompatRow[] = [
      { name: "a", svc: side, reference: side, passes: true, wallRatio: 0.4, cpuRatio: 0.3 },
      { name: "b", svc: side, reference: side, passes: true, wallRatio: 0.6, cpuRatio: 0.5 },
    ];
    expect(summaryLine(rows)).toMatch(
      /median wall ratio svc\/reference 0\.50; median CPU ratio 0\.40$/,
    );
  });

  it("names the compositions below the bar whose difference is documented as the reference's", () => {
    const side = { exitCode: 0, error: undefined, wallSeconds: 1, frames: 10 };
    const rows: CompatRow[] = [
      { name: "a", svc: side, reference: side, passes: true, wallRatio: 0.4 },
      { name: "b", svc: side, reference: side, passes: false, wallRatio: 0.6, exception: "why" },
      { name: "c", svc: side, reference: side, passes: false, wallRatio: 0.5 },
    ];
    const line = summaryLine(rows);
    expect(line).toMatch(
      /^1\/3 of the compositions .*; 1 below it with a documented exception \(bench\/README.md: b\); svc renders 3\/3/,
    );
    expect(line).not.toMatch(/\bc\b\)/);
  });
});
