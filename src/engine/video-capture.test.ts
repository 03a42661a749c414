// Pages whose videos move with the picture: the catalog's heygen-avatar-promo-card (bench/compat)
// slides a belt of five <video> tiles left at a known speed. A frame captured before the videos'
// pictures reached the compositor showed the whole page as it was one frame earlier, on some
// renders and not others; every frame must show the belt where its timeline puts it. And a video
// picture that Chromium dropped on its way to the compositor (it was handed over while the one
// before was not acknowledged yet) must still be the one captured. And a page of offset, sped-up
// and looping clips shows, on every frame and in a chunk as in a whole render, the picture the
// reference renderer draws for that time, in CSS's colours.
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveChromium } from "./browser/browser";
import { CapturePage } from "./browser/capture";
import { resolveFfmpeg } from "./ffmpeg/ffmpeg";
import { startProjectServer } from "./browser/project-server";
import { renderComposition } from "./render";
import { waitUntilReady } from "./stages/render-run";
import { runtimeScript } from "./bundles/runtime-bundle";
import { compareLateChunk } from "./testing/chunk-compare";
import { decodeFrame, pixelAt, probeMedia } from "./testing/probe";
import { mediaTimeAt } from "./runtime/video-time";

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
  // 24 frames of five 1080p videos: ~110 s at load 20, past two minutes at load 35.
  it("are drawn where the timeline puts them on every frame", { timeout: 300_000 }, async () => {
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

describe("a video seeked twice with no frame drawn between the seeks", () => {
  // As a stepped catch-up does: seeks that draw nothing, then a seek that is captured. The first
  // seek hands its picture to the compositor, and Chromium drops the second's hand-over while the
  // first is not acknowledged (no frame was drawn to acknowledge it): without the engine asking
  // for the picture again (SvcPage.presentVideos), every frame here showed the first seek's.
  it("is captured showing the second seek's picture", { timeout: 120_000 }, async () => {
    const dir = join(scratch, "twice");
    await mkdir(dir, { recursive: true });
    // 20 fps, red level 6 * n in frame n, every frame a key frame; the page shows it 320x180.
    const ffmpeg = await resolveFfmpeg();
    execFileSync(ffmpeg.path, [
      ...["-v", "error", "-f", "lavfi", "-i", "color=c=black:s=160x90:r=20:d=2"],
      ...["-vf", "geq=r='6*N':g=0:b=0", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "1"],
      join(dir, "clip.mp4"),
    ]);
    await writeFile(
      join(dir, "index.html"),
      `<!doctype html><html><body style="margin:0;background:#000">
<div id="root" data-composition-id="main" data-width="320" data-height="180" data-duration="2"
 style="position:relative;width:320px;height:180px"><video src="clip.mp4"
 style="position:absolute;left:0;top:0;width:320px;height:180px"></video></div></body></html>`,
    );
    const server = await startProjectServer(dir);
    const pageErrors: string[] = [];
    const session = await CapturePage.open({
      browser: await resolveChromium(),
      viewport: { width: 320, height: 180 },
      deviceScaleFactor: 1,
      transparent: false,
      imageFormat: "png",
      jpegQuality: 90,
      initScript: runtimeScript({ variables: {} }),
      projectOrigin: server.origin,
      allowNetwork: false,
      onPageError: (message) => pageErrors.push(message),
    });
    const shown: { frame: number; videoFrame: number }[] = [];
    try {
      await session.load(`${server.origin}/index.html`, 30_000);
      await waitUntilReady(session, 30_000, pageErrors);
      await session.seek(0);
      await session.capture(false);
      for (let frame = 2; frame <= 30; frame += 4) {
        // Video frame `frame - 1`, drawn by nothing; then video frame `frame`, captured.
        await session.evaluate(`window.__svc.seek(${(frame - 1) / 20})`);
        await session.seek(frame / 20);
        const { image } = await session.capture(false);
        const file = join(dir, `frame-${frame}.png`);
        await writeFile(file, image);
        const [red] = pixelAt(await decodeFrame(file, 0), 160, 90);
        shown.push({ frame, videoFrame: Math.round(red / 6) });
      }
    } finally {
      await session.close();
      await server.close();
    }
    expect(shown).toEqual(shown.map(({ frame }) => ({ frame, videoFrame: frame })));
  });
});

describe("a page of clips offset, sped up and looped", () => {
  // 10 fps, grey (no chroma: no matrix can shift it) at luma 40 + 4n in frame n, every frame a
  // key frame. A: from 0.5 s, media from 0.5 s
  // at twice the speed, until 2 s; B: looped over its last second. The page is 3 s at 4 fps.
  const PAGE = `<!doctype html><html><body style="margin:0;background:#000">
<div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="3"
 style="position:relative;width:640px;height:360px">
<video id="a" src="clip.mp4" muted data-start="0.5" data-duration="1.5" data-media-start="0.5"
 data-playback-rate="2" style="position:absolute;left:0;top:0;width:320px;height:180px"></video>
<video id="b" src="clip.mp4" muted loop data-start="0" data-duration="3" data-media-start="3"
 style="position:absolute;left:320px;top:0;width:320px;height:180px;box-shadow:0 0 40px #fff"></video>
<div style="position:absolute;left:0;top:240px;width:640px;height:120px;background:#00ff00"></div>
</div></body></html>`;

  it(
    "shows the reference's picture for every frame, in chunks as whole, in CSS's colours",
    { timeout: 300_000 },
    async () => {
      const dir = join(scratch, "clips");
      await mkdir(dir, { recursive: true });
      const ffmpeg = await resolveFfmpeg();
      execFileSync(ffmpeg.path, [
        ...["-v", "error", "-f", "lavfi", "-i", "color=c=black:s=160x90:r=10:d=4"],
        ...["-vf", "format=yuv420p,geq=lum='40+4*N':cb=128:cr=128", "-c:v", "libx264"],
        ...["-pix_fmt", "yuv420p", "-g", "1", join(dir, "clip.mp4")],
      ]);
      await writeFile(join(dir, "index.html"), PAGE);
      const options = { projectDir: dir, fps: 4, quality: "standard" as const, workers: 1 };
      const output = join(dir, "whole.mp4");
      const result = await renderComposition({ ...options, output, thumbnail: false });
      expect(result.frames).toBe(12);
      const info = await probeMedia(output);
      expect(info.streams.find((s) => s.type === "video")).toMatchObject({ width: 1920 });
      const shown: { frame: number; a: number | null; b: number | null }[] = [];
      const expected: typeof shown = [];
      for (let frame = 0; frame < 12; frame++) {
        const t = frame / 4;
        const picture = await decodeFrame(output, frame);
        // The box centres, scaled 3x to the 1920x1080 output; a hidden video leaves black.
        const level = (x: number) => {
          const [red] = pixelAt(picture, x, 270);
          return red < 10 ? null : Math.round(((red * 219) / 255 + 16 - 40) / 4);
        };
        shown.push({ frame, a: level(480), b: level(1440) });
        const clipFrame = (media: number) => Math.floor(media * 10 + 1e-6);
        const a = mediaTimeAt({ start: 0.5, mediaStart: 0.5, rate: 2, loop: false }, t, 4, 4);
        const b = mediaTimeAt({ start: 0, mediaStart: 3, rate: 1, loop: true }, t, 4, 4);
        expected.push({
          frame,
          // Shown from its start until its end, as the reference draws it.
          a: t >= 0.5 && t < 2 ? clipFrame(a) : null,
          b: clipFrame(b),
        });
        // No shadow around B (the reference does not draw a video's shadow), and the CSS green
        // stays pure green in the BT.709 file.
        expect(pixelAt(picture, 1440, 560).slice(0, 3)).toEqual([0, 0, 0]);
        const [r, g, b2] = pixelAt(picture, 960, 900);
        expect({ r, g, b: b2 }).toEqual({
          r: expect.closeTo(0, -0.7),
          g: expect.closeTo(255, -0.7),
          b: expect.closeTo(0, -0.7),
        });
      }
      expect(shown).toEqual(expected);
      const late = await compareLateChunk(options, output, result.frames, join(dir, "chunk"));
      expect(late.minSsim).toBeGreaterThanOrEqual(0.999);
    },
  );
});
