// Distributed rendering at the engine level: a render cut into chunks, each rendered on its own
// (as separate machines would, each with its own copy of the project), then joined, decodes to
// the very frames of a whole render, with the audio and a thumbnail. (Chromium's raster keeps some
// state from frame to frame, so on compositions with many soft edges a chunk's first frames can
// differ by a few levels at edges; this composition's frames are exact. See bench/README.md.)
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { joinChunks, planChunks, renderChunk } from "./chunks";
import { frameHashes, probeMedia } from "./testing/probe";
import { renderComposition } from "./render";

const TONE = resolve(import.meta.dirname, "../../examples/with-audio/tone.wav");
let scratch: string;
let project: string;

/**
 * Bars driven by GSAP keyframes (a timeline jumped to a frame differs from one stepped to it, so a
 * chunk must catch up), a sliding caption and a tone that starts at 0.5 s.
 */
const COMPOSITION = `<!doctype html><html><head><style>html,body{margin:0;background:#101828}
.bar{position:absolute;bottom:120px;width:60px;height:600px;background:#38e8c6;transform-origin:bottom}
#caption{position:absolute;left:100px;top:100px;font:bold 96px sans-serif;color:#fff}</style></head>
<body><div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="4"
 style="position:relative;width:1920px;height:1080px;overflow:hidden">
 <div id="caption">Chunks</div>
 <audio src="tone.wav" data-start="0.5"></audio>
 <script src="https://cdn.jsdelivr.net/npm/gsap@3.15.0/dist/gsap.min.js"></script>
 <script>
   const root = document.getElementById("root");
   const tl = gsap.timeline({ paused: true });
   for (let i = 0; i < 12; i++) {
     const bar = document.createElement("div");
     bar.className = "bar";
     bar.style.left = 200 + i * 120 + "px";
     root.append(bar);
     const keyframes = [];
     for (let k = 0; k < 36; k++) {
       const wave = 0.55 + 0.35 * Math.sin(k * 0.7 + i * 0.45);
       keyframes.push({ scaleY: Math.max(0.08, wave * (0.6 + ((k * 7 + i * 13) % 10) / 20)), duration: 0.26 });
     }
     tl.to(bar, { keyframes, ease: "sine.inOut" }, 1.2);
   }
   tl.to("#caption", { x: 900, duration: 4, ease: "none" }, 0);
   window.__timelines = { main: tl };
 </script></div></body></html>`;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-chunks-test-"));
  project = join(scratch, "project");
  await mkdir(project);
  await writeFile(join(project, "index.html"), COMPOSITION);
  await cp(TONE, join(project, "tone.wav"));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("planChunks", () => {
  it("cuts by whole segments, from frame count and fps only, and keeps short renders whole", () => {
    // 60 s at 30 fps: segments of 113 frames (1800 / 16, at most 4 s), three to a chunk.
    const chunks = planChunks(1800, 30, { chunkSeconds: 10, maxChunks: 64 });
    expect(chunks.map((c) => c.frameCount)).toEqual([339, 339, 339, 339, 339, 105]);
    expect(chunks.reduce((sum, c) => sum + c.frameCount, 0)).toBe(1800);
    expect(
      chunks.every(
        (c, i) => i === 0 || c.firstFrame === chunks[i - 1]!.firstFrame + chunks[i - 1]!.frameCount,
      ),
    ).toBe(true);
    expect(planChunks(1800, 30, { chunkSeconds: 10, maxChunks: 2 })).toHaveLength(2);
    expect(planChunks(90, 30, { chunkSeconds: 10, maxChunks: 64 })).toHaveLength(1);
    expect(planChunks(1800, 30, { chunkSeconds: 10, maxChunks: 1 })).toHaveLength(1);
  });
});

describe("a render in chunks", () => {
  it(
    "decodes to the same frames as a whole render, with audio and a thumbnail",
    { timeout: 300_000 },
    async () => {
      const fps = 10;
      const whole = await renderComposition({
        projectDir: project,
        output: join(scratch, "whole.mp4"),
        fps,
        quality: "draft",
        thumbnail: false,
      });
      const chunks = planChunks(whole.frames, fps, { chunkSeconds: 2, maxChunks: 8 });
      expect(chunks.length).toBeGreaterThan(1);

      const segmentFiles: string[] = [];
      let audio;
      let thumbnails = 0;
      for (const chunk of chunks) {
        // Each chunk gets its own copy of the project, as another machine would.
        const projectDir = join(scratch, `project-${chunk.index}`);
        await cp(project, projectDir, { recursive: true });
        const outputDir = join(scratch, `chunk-${chunk.index}`);
        await mkdir(outputDir);
        const result = await renderChunk({
          projectDir,
          fps,
          quality: "draft",
          chunk,
          frames: whole.frames,
          outputDir,
        });
        expect(result.segmentFiles).toHaveLength(chunk.segmentCount);
        segmentFiles.push(...result.segmentFiles);
        if (result.thumbnailPath) thumbnails++;
        if (chunk.index === 0) {
          audio = result.audio.map((input) => ({
            ...input,
            source: join(project, relative(projectDir, input.source)),
          }));
        }
      }
      expect(thumbnails).toBe(1);
      expect(audio).toHaveLength(1);

      const joined = join(scratch, "joined.mp4");
      await joinChunks({
        segmentFiles,
        output: joined,
        format: "mp4",
        durationSeconds: whole.durationSeconds,
        audio: audio!,
        allowNetwork: false,
      });
      expect(await frameHashes(joined)).toEqual(await frameHashes(whole.outputPath));
      const info = await probeMedia(joined);
      expect(info.streams.some((stream) => stream.type === "audio")).toBe(true);
    },
  );
});
