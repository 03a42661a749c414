// Pages whose videos move with the picture: the catalog's heygen-avatar-promo-card (bench/compat)
// slides a belt of five <video> tiles left at a known speed. A frame captured before the videos'
// pictures reached the compositor showed the whole page as it was one frame earlier, on some
// renders and not others; every frame must show the belt where its timeline puts it.
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveFfmpeg } from "./ffmpeg";
import { renderComposition } from "./render";

const PROJECT = resolve(
  import.meta.dirname,
  "../../bench/compat/projects/heygen-avatar-promo-card",
);
const FPS = 10;
const FRAMES = 24;
/** The belt's entry offsets, one every 0.04 s (the composition's own table). */
const ENTRY = [
  0, -11.39, -21.64, -30.9, -39.04, -46.29, -52.55, -57.98, -62.72, -66.71, -69.99, -72.75, -74.86,
  -76.52, -77.85, -78.8, -79.36, -79.75, -79.87, -79.94, -80.0,
];

/** Where the right edge of the cyan brand tile is at `t`, in output pixels (1080 wide). */
function expectedEdge(t: number): number {
  const step = Math.min(t / 0.04, ENTRY.length - 1);
  const low = Math.floor(step);
  const high = Math.min(low + 1, ENTRY.length - 1);
  const entry = ENTRY[low]! + (ENTRY[high]! - ENTRY[low]!) * (step - low);
  return 499 + entry - 93.601 * t;
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-video-capture-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("video tiles that move", () => {
  it("are drawn where the timeline puts them on every frame", async () => {
    const output = join(scratch, "belt.mp4");
    await renderComposition({
      projectDir: PROJECT,
      output,
      fps: FPS,
      workers: 1,
      thumbnail: false,
    });
    const ffmpeg = await resolveFfmpeg();
    const rows = execFileSync(
      ffmpeg.path,
      [
        ...["-v", "error", "-i", output, "-frames:v", String(FRAMES)],
        ...["-vf", "crop=1080:2:0:800,scale=1080:1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
      ],
      { maxBuffer: 64 << 20 },
    );
    const edges: { frame: number; edge: number }[] = [];
    for (let frame = 0; frame < FRAMES; frame++) {
      const row = rows.subarray(frame * 1080 * 3, (frame + 1) * 1080 * 3);
      let edge = -1;
      for (let x = 0; x < 1080; x++) {
        if (row[3 * x]! < 60 && row[3 * x + 1]! > 150 && row[3 * x + 2]! > 200) edge = x;
      }
      edges.push({ frame, edge });
    }
    expect(edges).toEqual(
      edges.map(({ frame }) => ({
        frame,
        edge: expect.closeTo(Math.max(0, expectedEdge(frame / FPS)), -0.7),
      })),
    );
  });
});
