// Relative starts and nested hosts' playback start and rate (runtime/timing.ts) in a real render:
// each clip is on screen exactly when the reference puts it there, the nested timeline runs from
// its playback start at its rate, and a chunk that starts mid-way shows the whole render's frames.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderComposition } from "./render";
import { compareLateChunk } from "./testing/chunk-compare";
import { decodeFrame, pixelAt, type DecodedFrame } from "./testing/probe";

const FPS = 10;
let dir: string;

// 320x180: a red clip at 0-0.5 s, a green one 0.5 s after it ends (1-2 s), and a host 0.5 s before
// the green one ends (1.5 s) whose child clock starts 1 s in and runs its timeline at rate 2. The
// child's blue clip (its 1.5 s) is on the root's 1.5 - 1 + 1.5 = 2 s; its timeline moves a white
// bar 20 px per second of child time.
const PAGE = `<!doctype html><html><body style="margin:0;background:#000">
<div id="stage" data-composition-id="main" data-width="320" data-height="180" data-duration="3"
  style="position:relative;width:320px;height:180px;background:#000">
  <div id="a" class="clip" data-start="0" data-duration="0.5"
    style="position:absolute;left:10px;top:10px;width:80px;height:80px;background:#f00"></div>
  <div id="b" class="clip" data-start="a + 0.5" data-duration="1"
    style="position:absolute;left:110px;top:10px;width:80px;height:80px;background:#0f0"></div>
  <div id="h" data-composition-id="child" data-composition-src="child.html" data-start="b - 0.5"
    data-duration="1.5" data-playback-start="1" data-playback-rate="2" data-width="320"
    data-height="80" style="position:absolute;left:0;top:100px;width:320px;height:80px"></div>
</div></body></html>`;

const CHILD = `<!doctype html><html><body>
<div data-composition-id="child" data-width="320" data-height="80"
  style="position:relative;width:320px;height:80px">
  <div id="bar" style="position:absolute;left:0;top:0;width:10px;height:30px;background:#fff"></div>
  <div class="clip" data-start="1.5" data-duration="1"
    style="position:absolute;left:220px;top:40px;width:80px;height:40px;background:#00f"></div>
</div>
<script>
  const bar = document.getElementById("bar");
  window.__timelines = window.__timelines || {};
  window.__timelines["child"] = {
    duration: () => 10,
    seek: (t) => { bar.style.left = t * 20 + "px"; },
  };
</script></body></html>`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-timing-"));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "index.html"), PAGE);
  await writeFile(join(dir, "child.html"), CHILD);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The colour at page pixel (x, y) of a 320x180 page, whatever size the video is. */
function colourAt(
  frame: DecodedFrame,
  x: number,
  y: number,
): "red" | "green" | "blue" | "white" | "black" {
  const [r, g, b] = pixelAt(
    frame,
    Math.round((x / 320) * frame.width),
    Math.round((y / 180) * frame.height),
  );
  if (r > 180 && g > 180 && b > 180) return "white";
  if (r > 150 && g < 90 && b < 90) return "red";
  if (g > 150 && r < 90 && b < 90) return "green";
  if (b > 150 && r < 90 && g < 90) return "blue";
  return "black";
}

describe("relative starts and nested playback start and rate", () => {
  it("draws each clip when the reference does, the nested timeline at its rate, chunks alike", async () => {
    const options = { projectDir: dir, fps: FPS, quality: "draft" as const };
    const whole = await renderComposition({ ...options, output: join(dir, "whole.mp4") });
    expect(whole.warnings).toEqual([]);
    expect(whole.frames).toBe(3 * FPS);
    const at = (frame: number) => decodeFrame(whole.outputPath, frame);

    const early = await at(2); // 0.2 s
    expect([colourAt(early, 50, 50), colourAt(early, 150, 50)]).toEqual(["red", "black"]);
    const middle = await at(12); // 1.2 s: "a + 0.5" is on, the host not yet
    expect([colourAt(middle, 50, 50), colourAt(middle, 150, 50)]).toEqual(["black", "green"]);
    expect(colourAt(middle, 5, 110)).toBe("black");
    const nested = await at(17); // 1.7 s: the host is on, its blue clip (root 2 s) not yet
    expect(colourAt(nested, 260, 160)).toBe("black");
    const late = await at(25); // 2.5 s: child time 1 + (2.5 - 1.5) x 2 = 3, bar at 60-70 px
    expect(colourAt(late, 150, 50)).toBe("black");
    expect(colourAt(late, 260, 160)).toBe("blue");
    expect(colourAt(late, 65, 110)).toBe("white");
    // Where rate 1 (child time 2) or no playback start (child time 2) would have put it.
    expect(colourAt(late, 45, 110)).toBe("black");

    const chunk = await compareLateChunk(options, whole.outputPath, whole.frames, dir);
    expect(chunk.minSsim).toBeGreaterThanOrEqual(0.999);
  });
});
