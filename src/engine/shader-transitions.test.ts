// Shader transitions of @hyperframes/shader-transitions, drawn as the reference draws them
// (runtime/shader-transitions.ts, capture/shader-frames.ts): two still scenes and one
// domain-warp transition, 2 s at 10 fps, the libraries from npm with the network off. A frame
// inside the window is the blend (neither scene), and a chunk that starts inside the
// window draws the whole render's frames, as does a still there.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderComposition } from "./render";
import { renderStill } from "./outputs/still";
import { compareLateChunk } from "./testing/chunk-compare";
import { decodeFrame, type DecodedFrame } from "./testing/probe";
import { transitionAt } from "./capture/shader-frames";

const FPS = 10;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-shader-transitions-"));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

// The window is 0.9-1.5 s: frames 9 to 15; the late chunk starts at frame 10, inside it.
const PAGE = `<!doctype html>
<html><head>
<script src="https://cdn.jsdelivr.net/npm/gsap@3.14.2/dist/gsap.min.js"></script>
<script src="https://cdn.jsdelivr.net/npm/@hyperframes/shader-transitions@0.8.41/dist/index.global.js"></script>
<style>
  html, body { margin: 0; width: 640px; height: 360px; overflow: hidden; background: #111; }
  .scene { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center;
    font: 800 64px sans-serif; color: #fff; }
  #a { background: linear-gradient(135deg, #ff6b2b, #7a1fff); }
  #b { background: linear-gradient(135deg, #00b4d8, #0a9396); }
</style></head>
<body>
<div id="root" data-composition-id="main" data-width="640" data-height="360" data-start="0" data-duration="2">
  <div class="scene" id="a">One</div>
  <div class="scene" id="b">Two</div>
</div>
<script>
  const tl = gsap.timeline({ paused: true });
  HyperShader.init({
    bgColor: "#111111",
    accentColor: "#ff6b2b",
    scenes: ["a", "b"],
    transitions: [{ time: 0.9, shader: "domain-warp", duration: 0.6 }],
    timeline: tl,
  });
  window.__timelines = { main: tl };
</script>
</body></html>`;

/** The share of pixels whose colour differs by more than 24 of 255 in some channel. */
function differingShare(a: DecodedFrame, b: DecodedFrame): number {
  let differing = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    const far = [0, 1, 2].some((c) => Math.abs(a.data[i + c]! - b.data[i + c]!) > 24);
    if (far) differing++;
  }
  return differing / (a.data.length / 4);
}

describe("shader transitions", () => {
  it("finds a frame's transition and progress as the library's compositor does", () => {
    const transitions = [
      { time: 1.25, duration: 0.5, shader: "domain-warp", fromScene: "a", toScene: "b" },
      { time: 2, duration: 0.5, fromScene: "b", toScene: "c" },
    ];
    expect(transitionAt(transitions, 1.2)).toBeUndefined();
    expect(transitionAt(transitions, 1.25)?.progress).toBe(0);
    expect(transitionAt(transitions, 1.5)?.progress).toBe(0.5);
    expect(transitionAt(transitions, 1.75)?.progress).toBe(1);
    // A CSS crossfade (no shader) is the page's own.
    expect(transitionAt(transitions, 2.2)).toBeUndefined();
  });

  it("blends the two scenes inside the window, and a chunk starting there draws the same", async () => {
    const dir = join(scratch, "page");
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "index.html"), PAGE);
    const options = { projectDir: dir, fps: FPS, quality: "draft" as const, allowNetwork: false };
    const whole = await renderComposition({ ...options, output: join(dir, "whole.mp4") });
    expect(whole.warnings).toEqual([]);
    expect(whole.frames).toBe(2 * FPS);
    const frame = (index: number) => decodeFrame(whole.outputPath, index);
    const [one, mid, two] = await Promise.all([frame(5), frame(12), frame(19)]);
    // Before the window scene one, after it scene two; at its middle the warp shows both, with
    // the accent glow along the edge, and is neither (svc drew scene two there before).
    expect(differingShare(one, two)).toBeGreaterThan(0.5);
    expect(differingShare(mid, one)).toBeGreaterThan(0.2);
    expect(differingShare(mid, two)).toBeGreaterThan(0.2);
    // A still at that time is the video's frame, blend and all (it showed scene two before the
    // still path drew its frame with the capture loop's steps).
    const still = await renderStill({ ...options, output: join(dir, "mid.png"), time: 1.2 });
    expect(differingShare(await decodeFrame(still.outputPath, 0), mid)).toBeLessThan(0.02);

    const late = await compareLateChunk(options, whole.outputPath, whole.frames, dir);
    expect(late.chunk.firstFrame).toBe(10);
    expect(late.minSsim).toBeGreaterThanOrEqual(0.999);
  });
});
