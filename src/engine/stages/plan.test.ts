import { describe, expect, it } from "vitest";
import { planChunks, stealSegments, type SegmentRun } from "./plan";

describe("planChunks sized by live workers", () => {
  const sizes = (frames: number, liveWorkers: number, minChunkFrames = 30) =>
    planChunks(frames, 30, { chunkSeconds: 10, maxChunks: 256, liveWorkers, minChunkFrames }).map(
      (chunk) => chunk.frameCount,
    );

  it("cuts about two chunks per live worker, in whole segments, up to one segment each", () => {
    // 10 minutes at 30 fps: 150 segments of 120 frames.
    expect(sizes(18_000, 10)).toHaveLength(19); // 8 segments a chunk: ceil(150 / 20)
    expect(sizes(18_000, 100)).toHaveLength(150); // every segment its own chunk
    expect(sizes(18_000, 100).every((frames) => frames === 120)).toBe(true);
    // 60 s: 16 segments of 113 frames, so at most 16 chunks however many workers.
    expect(sizes(1800, 4)).toHaveLength(8);
    expect(sizes(1800, 20)).toHaveLength(16);
  });

  it("keeps chunks at least the floor long, and a short render whole", () => {
    expect(sizes(1800, 20, 339)).toHaveLength(6); // 3 segments (339 frames) a chunk
    expect(sizes(60, 20, 90)).toHaveLength(1);
    expect(
      planChunks(18_000, 30, { chunkSeconds: 10, maxChunks: 32, liveWorkers: 100 }),
    ).toHaveLength(30); // the cap still holds
  });
});

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
