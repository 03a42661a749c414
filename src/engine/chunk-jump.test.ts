// A chunk that starts mid-way jumps its page straight to its first frame (SvcPage.jump) instead of
// stepping through every earlier frame, and still shows the whole render's frames: on small
// compositions made to break a jump (GSAP from()/immediateRender, relative tweens, tweens on one
// property back to back or overlapping, nested timelines, callbacks, CSS and WAAPI animations, rAF and timer
// state, video), and where a jump cannot be faithful (GSAP onUpdate counting frames, an animation
// started in the skipped frames) the page is stepped instead, with a warning. 3 s at 10 fps, draft:
// the chunk starts at frame 20 and its page jumps from 0 to 15 (5 frames of preroll).
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeWarmPages, renderChunk, warmUp } from "./chunks";
import { resolveFfmpeg } from "./ffmpeg/ffmpeg";
import { segmentLength } from "./stages/plan";
import { frameHashes } from "./testing/probe";
import { renderComposition } from "./render";
import { compareLateChunk } from "./testing/chunk-compare";
import { spareBrowserCounts } from "./browser/spare-browser";

const FPS = 10;
let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-chunk-jump-"));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const GSAP = `<script src="https://cdn.jsdelivr.net/npm/gsap@3.15.0/dist/gsap.min.js"></script>`;

function page(body: string, style = ""): string {
  return `<!doctype html><html><head><style>html,body{margin:0;background:#102030}
.box{position:absolute;width:160px;height:160px;background:#f5c542;font:40px sans-serif}${style}</style></head>
<body><div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="3"
 style="position:relative;width:1920px;height:1080px;overflow:hidden">${body}</div></body></html>`;
}

const COMPOSITIONS: Record<string, { html: string; video?: boolean; mode: "jump" | "step" }> = {
  "gsap-tricky": {
    mode: "jump",
    html: page(`
      <div id="a" class="box" style="left:100px;top:100px"></div>
      <div id="b" class="box" style="left:100px;top:300px"></div>
      <div id="c" class="box" style="left:100px;top:500px"></div>
      <div id="d" class="box" style="left:100px;top:700px"></div>
      <div id="e" class="box" style="left:900px;top:100px;width:600px">-</div>
      <div id="f" class="box" style="left:900px;top:500px;border-radius:50%"></div>
      ${GSAP}
      <script>
        const tl = gsap.timeline({ paused: true });
        tl.from("#a", { x: 600, duration: 0.6 }, 0.3);
        tl.from("#a", { y: 300, duration: 0.5, immediateRender: false }, 1.2);
        tl.to("#b", { x: "+=300", duration: 0.4 }, 0);
        tl.to("#b", { x: "+=300", duration: 0.4 }, 0.6);
        tl.to("#b", { x: "-=150", duration: 1.2 }, 1.4);
        tl.to("#c", { rotation: 90, duration: 0.5 }, 0.2)
          .to("#c", { rotation: 30, duration: 0.5 })
          .to("#c", { rotation: 200, duration: 1.5 });
        const inner = gsap.timeline();
        inner.to("#d", { scale: 1.6, duration: 0.5 }).to("#d", { backgroundColor: "#e04040", duration: 0.8 });
        const outer = gsap.timeline();
        outer.add(inner, 0.2).to("#d", { x: 400, duration: 1 }, 0.9);
        tl.add(outer, 0.4);
        const e = document.getElementById("e");
        tl.call(() => { e.textContent = "one"; e.style.left = "1000px"; }, [], 0.7);
        tl.call(() => { e.textContent += " two"; e.style.background = "#40e080"; }, [], 1.1);
        tl.set("#e", { opacity: 0.5 }, 2.2);
        // Starts while the intro still scales #f: records the intro's value at 0.9 s, not its end.
        tl.from("#f", { scale: 0.3, duration: 1.2 }, 0);
        tl.to("#f", { scale: 1.5, x: 300, duration: 2.5, ease: "none" }, 0.9);
        window.__timelines = { main: tl };
      </script>`),
  },
  "css-waapi-raf-video": {
    mode: "jump",
    video: true,
    html: page(
      `
      <div id="css" class="box" style="left:100px;top:100px;animation:spin 1.3s linear infinite"></div>
      <div id="waapi" class="box" style="left:400px;top:100px"></div>
      <div id="raf" class="box" style="left:100px;top:400px">0</div>
      <div id="timer" class="box" style="left:100px;top:700px">0</div>
      <video src="clip.mp4" style="position:absolute;left:900px;top:400px;width:640px;height:360px"></video>
      <script>
        document.getElementById("waapi").animate(
          [{ transform: "translateX(0)" }, { transform: "translateX(700px)" }],
          { duration: 1700, iterations: Infinity, easing: "ease-in-out" });
        const raf = document.getElementById("raf");
        let frames = 0;
        const tick = () => { frames++; raf.textContent = frames; raf.style.left = 100 + (frames * 37) % 700 + "px"; requestAnimationFrame(tick); };
        requestAnimationFrame(tick);
        const timer = document.getElementById("timer");
        let ticks = 0;
        setInterval(() => { ticks++; timer.textContent = ticks; timer.style.left = 100 + ticks * 45 + "px"; }, 130);
      </script>`,
      "@keyframes spin{to{transform:rotate(360deg)}}",
    ),
  },
  "gsap-onupdate-counter": {
    mode: "step",
    html: page(`
      <div id="n" class="box" style="left:100px;top:100px">0</div>
      ${GSAP}
      <script>
        const n = document.getElementById("n");
        let updates = 0;
        const tl = gsap.timeline({ paused: true });
        tl.to("#n", { x: 900, duration: 3, ease: "none", onUpdate: () => { updates++; n.textContent = updates; n.style.top = 100 + (updates % 40) * 20 + "px"; } }, 0);
        window.__timelines = { main: tl };
      </script>`),
  },
  "css-animation-started-late": {
    mode: "step",
    html: page(
      `
      <div id="late" class="box" style="left:100px;top:100px"></div>
      ${GSAP}
      <script>
        const tl = gsap.timeline({ paused: true });
        tl.call(() => document.getElementById("late").classList.add("go"), [], 0.8);
        tl.to({}, { duration: 3 }, 0);
        window.__timelines = { main: tl };
      </script>`,
      ".go{animation:slide 1.5s linear forwards}@keyframes slide{to{transform:translateX(1200px)}}",
    ),
  },
};

describe("a chunk that starts mid-way", () => {
  it.each(Object.keys(COMPOSITIONS))(
    "%s: shows the whole render's frames",
    { timeout: 180_000 },
    async (name) => {
      const { html, video, mode } = COMPOSITIONS[name]!;
      const projectDir = join(scratch, name);
      await mkdir(projectDir, { recursive: true });
      await writeFile(join(projectDir, "index.html"), html);
      if (video) await testVideo(join(projectDir, "clip.mp4"));
      const base = { projectDir, fps: FPS, quality: "draft" as const, allowNetwork: false };
      const whole = await renderComposition({
        ...base,
        output: join(scratch, `${name}.mp4`),
        thumbnail: false,
      });
      const compared = await compareLateChunk(base, whole.outputPath, whole.frames, projectDir);
      expect(compared.chunk.firstFrame).toBe(20);
      expect(compared.result.catchUp.mode).toBe(mode);
      const stepped = compared.result.warnings.filter((w) => w.includes("could not jump"));
      expect(stepped).toHaveLength(mode === "step" ? 1 : 0);
      expect(compared.minSsim).toBeGreaterThanOrEqual(0.999);
    },
  );
});

/** A 3 s clip with a moving picture (FFmpeg's test source), 10 fps, small. */
async function testVideo(path: string): Promise<void> {
  const ffmpeg = await resolveFfmpeg();
  await promisify(execFile)(ffmpeg.path, [
    "-v",
    "error",
    "-f",
    "lavfi",
    "-i",
    "testsrc=size=320x180:rate=10:duration=3",
    "-pix_fmt",
    "yuv420p",
    "-c:v",
    "libx264",
    path,
  ]);
}

describe("chunks of one render on one worker", () => {
  it(
    "reuse the page an earlier chunk left open, and show the whole render's frames",
    {
      timeout: 180_000,
    },
    async () => {
      const projectDir = join(scratch, "warm");
      await mkdir(projectDir, { recursive: true });
      await writeFile(join(projectDir, "index.html"), COMPOSITIONS["gsap-tricky"]!.html);
      const base = { projectDir, fps: FPS, quality: "draft" as const, allowNetwork: false };
      const whole = await renderComposition({
        ...base,
        output: join(scratch, "warm.mp4"),
        thumbnail: false,
      });
      const wholeHashes = await frameHashes(whole.outputPath);
      const length = segmentLength(whole.frames, FPS);
      // In order (0, 1, 2: each starts where the page stopped), then 1 again (behind the page).
      const seen: { warm: boolean; mode: string; equal: boolean }[] = [];
      // As a render worker does at start. Its spare browser draws 1080p at scale 1; a draft draws at
      // 0.75, so the first chunk starts its own, and the next spare is made like that one.
      await warmUp();
      const spares = { ...spareBrowserCounts };
      try {
        for (const index of [0, 1, 2, 1]) {
          const chunk = {
            index,
            firstSegment: index,
            segmentCount: 1,
            firstFrame: index * length,
            frameCount: Math.min(length, whole.frames - index * length),
          };
          const outputDir = join(scratch, `warm-${seen.length}`);
          const result = await renderChunk({
            ...base,
            chunk,
            frames: whole.frames,
            outputDir,
            warm: true,
          });
          const hashes = await frameHashes(result.segmentFiles[0]!);
          const expected = wholeHashes.slice(chunk.firstFrame, chunk.firstFrame + chunk.frameCount);
          if (seen.length === 0) {
            expect(spareBrowserCounts).toEqual({ ...spares, started: spares.started + 1 });
          }
          // The relaunch behind the page takes that spare.
          if (seen.length === 3) expect(spareBrowserCounts.taken).toBe(spares.taken + 1);
          seen.push({
            warm: result.warmPage,
            mode: result.catchUp.mode,
            equal: hashes.join() === expected.join(),
          });
        }
      } finally {
        await closeWarmPages();
      }
      expect(seen).toEqual([
        { warm: false, mode: "none", equal: true },
        { warm: true, mode: "none", equal: true },
        { warm: true, mode: "none", equal: true },
        { warm: true, mode: "jump", equal: true },
      ]);
    },
  );
});
