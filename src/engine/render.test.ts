// Acceptance tests of the render engine with real Chromium and FFmpeg: decoded pixels,
// ffprobe'd sizes and frame counts, typed errors, cancellation and clean-up.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile, mkdir } from "node:fs/promises";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineError } from "./errors";
import { resolveFfmpeg } from "./ffmpeg/ffmpeg";
import { decodeFrame, frameHashes, pixelAt, probeMedia } from "./testing/probe";
import { renderComposition, type RenderInternals } from "./render";
import type { RenderCompositionOptions } from "./types";

let scratch: string;
let renderTemp: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-render-test-"));
  // Renders keep their work files under TMPDIR; a private one shows that they clean up.
  renderTemp = join(scratch, "tmp");
  await mkdir(renderTemp);
  process.env.TMPDIR = renderTemp;
});

/** Neither the output folder nor the render temp folder holds anything. */
async function expectClean(outputDir: string) {
  expect(existsSync(outputDir) ? await readdir(outputDir) : []).toEqual([]);
  expect((await readdir(renderTemp)).filter((name) => name.startsWith("svc-"))).toEqual([]);
}

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function project(name: string, files: Record<string, string>): Promise<string> {
  const dir = join(scratch, name);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

function page(body: string, { width = 1920, height = 1080, duration = 2, head = "" } = {}): string {
  return `<!doctype html><html><head><style>html,body{margin:0;background:#000}</style>${head}</head>
<body><div id="root" data-composition-id="main" data-width="${width}" data-height="${height}" data-duration="${duration}"
 style="position:relative;width:${width}px;height:${height}px;overflow:hidden">${body}</div></body></html>`;
}

const GSAP = `<script src="https://cdn.jsdelivr.net/npm/gsap@3.15.0/dist/gsap.min.js"></script>`;

/**
 * Three grey bands whose level is 250 * t / 2 at time t: the top one by a CSS animation, the
 * middle one by WAAPI, the bottom one by a paused GSAP timeline.
 */
const RAMPS = page(
  `<div id="css" style="position:absolute;left:0;top:0;width:1920px;height:360px;animation:ramp 2s linear both"></div>
   <div id="waapi" style="position:absolute;left:0;top:360px;width:1920px;height:360px"></div>
   <div id="gsap" style="position:absolute;left:0;top:720px;width:1920px;height:360px;background:rgb(0,0,0)"></div>
   <style>@keyframes ramp{from{background:rgb(0,0,0)}to{background:rgb(250,250,250)}}</style>
   ${GSAP}
   <script>
     document.getElementById("waapi").animate(
       [{ background: "rgb(0,0,0)" }, { background: "rgb(250,250,250)" }],
       { duration: 2000, easing: "linear", fill: "both" });
     const tl = gsap.timeline({ paused: true });
     tl.to("#gsap", { backgroundColor: "rgb(250,250,250)", duration: 2, ease: "none" });
     window.__timelines = { main: tl };
   </script>`,
);

async function render(
  options: Omit<RenderCompositionOptions, "output"> & { output?: string },
  internals: RenderInternals = {},
) {
  const output =
    options.output ??
    join(scratch, "out", `${Math.random().toString(36).slice(2)}.${options.format ?? "mp4"}`);
  return renderComposition({ allowNetwork: false, ...options, output }, internals);
}

async function expectEngineError(promise: Promise<unknown>, code: string): Promise<EngineError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EngineError);
  expect((error as EngineError).code).toBe(code);
  expect((error as EngineError).hint).toBeTruthy();
  expect((error as EngineError).message.split("\n")).toHaveLength(1);
  return error as EngineError;
}

describe("renderComposition", () => {
  let rampsDir: string;
  let rampsOutput: string;

  beforeAll(async () => {
    rampsDir = await project("ramps", { "index.html": RAMPS });
    rampsOutput = (await render({ projectDir: rampsDir, fps: 10 })).outputPath;
  });

  it("seeks CSS animations, WAAPI and GSAP to the exact frame time", async () => {
    for (const frame of [0, 5, 13, 19]) {
      const decoded = await decodeFrame(rampsOutput, frame);
      const expected = (250 * frame) / 10 / 2;
      for (const [band, y] of [
        ["css", 180],
        ["waapi", 540],
        ["gsap", 900],
      ] as const) {
        const [r, g, b] = pixelAt(decoded, 960, y);
        expect({ band, frame, value: Math.round((r + g + b) / 3) }).toEqual({
          band,
          frame,
          value: expect.closeTo(expected, -0.8),
        });
      }
    }
  });

  it("gives the right size, fps and frame count", async () => {
    const info = await probeMedia(rampsOutput, { countFrames: true });
    const video = info.streams.find((s) => s.type === "video")!;
    expect(video).toMatchObject({
      codec: "h264",
      width: 1920,
      height: 1080,
      pixFmt: "yuv420p",
      fps: 10,
      frames: 20,
    });
    expect(existsSync(rampsOutput.replace(/\.mp4$/, ".thumbnail.jpg"))).toBe(true);
  });

  it("renders a one-frame video (1 s at 1 fps) with its thumbnail", async () => {
    const dir = await project("one-frame", { "index.html": page("", { duration: 1 }) });
    const { outputPath } = await render({ projectDir: dir, fps: 1 });
    const video = (await probeMedia(outputPath, { countFrames: true })).streams.find(
      (s) => s.type === "video",
    );
    expect(video).toMatchObject({ frames: 1 });
    expect(existsSync(outputPath.replace(/\.mp4$/, ".thumbnail.jpg"))).toBe(true);
  });

  it("is deterministic, and two workers give the same frames as one", async () => {
    const again = await render({ projectDir: rampsDir, fps: 10 });
    const parallel = await render({ projectDir: rampsDir, fps: 10, workers: 2 });
    const reference = await frameHashes(rampsOutput);
    expect(reference).toHaveLength(20);
    expect(await frameHashes(again.outputPath)).toEqual(reference);
    expect(await frameHashes(parallel.outputPath)).toEqual(reference);
  });

  it("lets a worker that ran out of segments take half of another's, and the frames stay one worker's", async () => {
    // 12 s at 2 fps: twelve 2-frame segments. Boxes come in with GSAP "from" tweens through the
    // whole timeline, so a worker that jumps ahead without stepping the scripts would show them
    // elsewhere, and the background moves so that no two frames are alike.
    const boxes = Array.from(
      { length: 6 },
      (_, i) =>
        `<div class="box" style="position:absolute;left:${120 + i * 280}px;top:420px;width:200px;height:200px;background:hsl(${i * 60},80%,55%)"></div>`,
    ).join("");
    const dir = await project("stealing", {
      "index.html": page(
        `<div id="bg" style="position:absolute;left:0;top:0;width:3840px;height:1080px;background:linear-gradient(90deg,#123,#c63,#123,#3c6)"></div>${boxes}
         ${GSAP}
         <script>
           const tl = gsap.timeline({ paused: true });
           tl.to("#bg", { x: -1920, duration: 12, ease: "none" }, 0);
           document.querySelectorAll(".box").forEach((box, i) =>
             tl.from(box, { y: 300, opacity: 0, duration: 1.2, ease: "back.out(2)" }, 0.5 + i * 1.8));
           window.__timelines = { main: tl };
         </script>`,
        { duration: 12 },
      ),
    });
    const single = await render({ projectDir: dir, fps: 2, workers: 1 });
    const reference = await frameHashes(single.outputPath);
    expect(reference).toHaveLength(24);

    // Worker 1 starts with nothing and takes the upper half of worker 0's segments: a jump
    // forward in its own page.
    const forward: { relaunch: boolean }[] = [];
    const ahead = await render(
      { projectDir: dir, fps: 2, workers: 2 },
      {
        blocks: (first, end) => [
          { first, end },
          { first: end, end },
        ],
        onSteal: (s) => forward.push(s),
      },
    );
    expect(forward.length).toBeGreaterThan(0);
    expect(forward[0]!.relaunch).toBe(false);
    expect(await frameHashes(ahead.outputPath)).toEqual(reference);

    // Worker 1 starts with the last segment only; when it is done the rest lies behind its page,
    // so it takes segments in a fresh browser.
    const backward: { relaunch: boolean }[] = [];
    const behind = await render(
      { projectDir: dir, fps: 2, workers: 2 },
      {
        blocks: (first, end) => [
          { first, end: end - 1 },
          { first: end - 1, end },
        ],
        onSteal: (s) => backward.push(s),
      },
    );
    expect(backward.some((s) => s.relaunch)).toBe(true);
    expect(await frameHashes(behind.outputPath)).toEqual(reference);
  });

  it("renders 4k mp4 at 3840x2160 (drawn at 4k) and 9:16 / 1:1 at their sizes", async () => {
    const cases = [
      { width: 1920, height: 1080, resolution: "4k" as const, expected: [3840, 2160] },
      { width: 1080, height: 1920, resolution: "1080p" as const, expected: [1080, 1920] },
      { width: 1080, height: 1080, resolution: "1080p" as const, expected: [1080, 1080] },
    ];
    for (const { width, height, resolution, expected } of cases) {
      const dir = await project(`size-${width}x${height}-${resolution}`, {
        "index.html": page(`<div style="width:100px;height:100px;background:#0f0"></div>`, {
          width,
          height,
          duration: 0.4,
        }),
      });
      const result = await render({ projectDir: dir, fps: 5, resolution });
      const info = await probeMedia(result.outputPath, { countFrames: true });
      expect(info.streams[0]).toMatchObject({ width: expected[0], height: expected[1], frames: 2 });
      // The browser draws at that size: a 4k render is not a 1080p capture scaled up.
      const captured: Buffer[] = [];
      await renderComposition(
        { projectDir: dir, fps: 5, resolution, output: join(dir, "capture.mp4") },
        {
          captureOnly: true,
          sinkForSegment: () => ({
            write: async (frame) => void (frame && captured.push(frame)),
            finish: async () => undefined,
            kill: () => undefined,
          }),
        },
      );
      const picture = join(dir, "first-frame.jpg");
      await writeFile(picture, captured[0]!);
      expect((await probeMedia(picture)).streams[0]).toMatchObject({
        width: expected[0],
        height: expected[1],
      });
    }
  });

  describe("refuses bad input with a code and a hint, leaving nothing behind", () => {
    it("missing entry file", async () => {
      const output = join(scratch, "errors-1", "out.mp4");
      await expectEngineError(
        render({ projectDir: rampsDir, composition: "nope.html", output }),
        "composition_not_found",
      );
      await expectClean(dirname(output));
    });

    it("aspect mismatch, detected and explicit", async () => {
      const odd = await project("odd-shape", {
        "index.html": page("", { width: 1000, height: 700 }),
      });
      await expectEngineError(render({ projectDir: odd }), "aspect_mismatch");
      await expectEngineError(
        render({ projectDir: rampsDir, aspectRatio: "9:16" }),
        "aspect_mismatch",
      );
    });

    it("a page script that throws", async () => {
      const broken = await project("broken", {
        "index.html": page(`<script>window.__timelines = {}; null.boom();</script>`),
      });
      const output = join(scratch, "errors-3", "out.mp4");
      const error = await expectEngineError(render({ projectDir: broken, output }), "page_error");
      expect(error.message).toMatch(/null|boom/);
      await expectClean(dirname(output));
    });

    it("an image that never loads: a timeout that names it", async () => {
      // A loopback server that accepts requests and never answers them.
      const pending: ServerResponse[] = [];
      const stalled = createServer((_req, res) => void pending.push(res));
      await new Promise<void>((done) => stalled.listen(0, "127.0.0.1", done));
      const { port } = stalled.address() as AddressInfo;
      try {
        const dir = await project("stalled-image", {
          "index.html": page(`<img src="http://127.0.0.1:${port}/logo.png">`),
        });
        const output = join(scratch, "errors-timeout", "out.mp4");
        const error = await expectEngineError(
          render({ projectDir: dir, output, allowNetwork: true, readyTimeoutSeconds: 2 }),
          "timeout",
        );
        expect(error.message).toMatch(/logo\.png/);
        await expectClean(dirname(output));
      } finally {
        for (const res of pending) res.destroy();
        stalled.close();
      }
    });

    it("4k with webm, and fps 0 or 241", async () => {
      await expectEngineError(
        render({ projectDir: rampsDir, resolution: "4k", format: "webm" }),
        "invalid_options",
      );
      await expectEngineError(render({ projectDir: rampsDir, fps: 0 }), "invalid_options");
      await expectEngineError(render({ projectDir: rampsDir, fps: 241 }), "invalid_options");
    });
  });

  it("draws a visible <video> at each frame's time, from the first frame on", async () => {
    // A clip whose red level is 100 * t: the frame at t must show that level.
    const dir = await project("video", {
      "index.html": page(
        `<video src="clip.mp4" muted playsinline data-start="0"
           style="position:absolute;left:0;top:0;width:320px;height:180px"></video>`,
        { width: 320, height: 180 },
      ),
    });
    const ffmpeg = await resolveFfmpeg();
    execFileSync(ffmpeg.path, [
      ...["-v", "error", "-f", "lavfi", "-i", "color=c=black:s=160x90:r=10:d=2"],
      ...["-vf", "geq=r='100*T':g=0:b=0", "-c:v", "libx264", "-pix_fmt", "yuv420p"],
      ...["-g", "1", join(dir, "clip.mp4")],
    ]);
    const { outputPath } = await render({ projectDir: dir, fps: 10 });
    for (const frame of [0, 5, 15]) {
      const [r] = pixelAt(await decodeFrame(outputPath, frame), 960, 540);
      expect({ frame, r }).toEqual({ frame, r: expect.closeTo((100 * frame) / 10, -1.2) });
    }
  });

  it("stops Chromium and FFmpeg within 2 s of a cancel and removes partial output", async () => {
    const long = await project("long", {
      "index.html": page(
        `<div style="animation:ramp 20s linear both;height:100%"></div><style>@keyframes ramp{to{background:#fff}}</style>`,
        { duration: 20 },
      ),
    });
    const outputDir = join(scratch, "cancel");
    const controller = new AbortController();
    let abortedAt = 0;
    const promise = render({
      projectDir: long,
      output: join(outputDir, "out.mp4"),
      signal: controller.signal,
      onProgress: (p) => {
        if (p.framesDone >= 10 && !abortedAt) {
          abortedAt = Date.now();
          controller.abort();
        }
      },
    });
    await expectEngineError(promise, "cancelled");
    expect(Date.now() - abortedAt).toBeLessThan(2000);
    await expectClean(outputDir);
    const children = execFileSync("ps", [
      "-o",
      "pid=,comm=",
      "--ppid",
      String(process.pid),
    ]).toString();
    expect(children).not.toMatch(/ffmpeg|chrom/);
  });
});
