import { describe, expect, it } from "vitest";
import { stealSegments, type SegmentRun } from "./plan";

describe("stealSegments", () => {
  it("gives an idle worker the upper half of the busiest worker's unstarted segments", () => {
    const runs: SegmentRun[] = [
      { next: 2, end: 5 },
      { next: 10, end: 10 },
      { next: 6, end: 10 },
    ];
    expect(stealSegments(runs, 1)).toBe(true);
    expect(runs).toEqual([
      { next: 2, end: 5 },
      { next: 8, end: 10 },
      { next: 6, end: 8 },
    ]);
  });

  it("leaves a lone segment with its owner, and steals nothing when every other worker is done", () => {
    const runs: SegmentRun[] = [
      { next: 4, end: 5 },
      { next: 10, end: 10 },
    ];
    expect(stealSegments(runs, 1)).toBe(false);
    expect(runs).toEqual([
      { next: 4, end: 5 },
      { next: 10, end: 10 },
    ]);
    runs[0] = { next: 5, end: 5 };
    expect(stealSegments(runs, 1)).toBe(false);
  });

  it("hands out every segment exactly once however the workers finish", () => {
    // Workers finish in a fixed pseudo-random order; each start is one segment taken from its run.
    const runs: SegmentRun[] = [
      { next: 0, end: 7 },
      { next: 7, end: 14 },
      { next: 14, end: 23 },
    ];
    const started: number[] = [];
    let seed = 7;
    for (let step = 0; step < 200; step++) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const worker = seed % 3;
      const run = runs[worker]!;
      if (run.next >= run.end && !stealSegments(runs, worker, 1)) continue;
      started.push(runs[worker]!.next++);
    }
    expect(started.sort((a, b) => a - b)).toEqual(Array.from({ length: 23 }, (_, i) => i));
  });
});
