// How soon a chunk deep into a long video draws its first frame: a 10-minute composition (one
// GSAP timeline of ~6,000 tweens, a CSS animation, a clock), the chunk that starts at frame 9,000
// (5:00 at 30 fps) rendered on its own, its page either jumped there (SvcPage.jump, the default)
// or stepped through every earlier frame (the method before). A B A B; the figure is the time from
// page ready to the first frame of the chunk (catch-up, including the 5 preroll frames drawn), from
// the engine's own ChunkResult.catchUp. The jumped chunk's frames are compared with the stepped
// one's (stepping is how a whole render reaches that frame).
//
// With --warm: per-chunk overhead of consecutive chunks of one render on one worker, each on a
// new browser (cold) or on the page the previous chunk left open (warm, engine/page-pool.ts), A B
// A B: overhead = a chunk's wall time minus its capture (first frame to last), at engine level
// (no claim, S3 download/upload or commit: bench:scale has those).
//
// Run: npm run bench:chunk-start -- [--reps 2] [--frame 9000] [--minutes 10] [--warm]
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { closeWarmPages, renderChunk } from "../src/engine/chunks";
import { segmentLength, type Chunk } from "../src/engine/stages/plan";
import { frameHashes } from "../src/engine/testing/probe";

const { values: flags } = parseArgs({
  options: {
    reps: { type: "string", default: "2" },
    frame: { type: "string", default: "9000" },
    minutes: { type: "string", default: "10" },
    warm: { type: "boolean", default: false },
    chunks: { type: "string", default: "6" },
  },
});
const FPS = 30;
const SECONDS = Number(flags.minutes) * 60;
const FRAMES = SECONDS * FPS;

function composition(): string {
  const tweens: string[] = [];
  for (let second = 0; second < SECONDS; second++) {
    for (let i = 0; i < 10; i++) {
      const x = (second * 97 + i * 131) % 1600;
      const y = (second * 53 + i * 89) % 900;
      tweens.push(`[${i},${x},${y},${second}]`);
    }
  }
  return `<!doctype html><html><head><meta charset="utf-8"><style>
html,body{margin:0;background:#0d1320}
.dot{position:absolute;left:0;top:0;width:120px;height:120px;border-radius:24px;background:#38e8c6}
#clock{position:absolute;right:60px;bottom:40px;font:64px sans-serif;color:#fff}
#spin{position:absolute;left:860px;top:440px;width:200px;height:200px;background:#f5c542;animation:spin 7s linear infinite}
@keyframes spin{to{transform:rotate(360deg)}}
</style></head><body>
<div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="${SECONDS}"
 style="position:relative;width:1920px;height:1080px;overflow:hidden">
<div id="spin"></div><div id="clock">0</div>
${Array.from({ length: 10 }, (_, i) => `<div class="dot" id="d${i}"></div>`).join("")}
<script src="https://cdn.jsdelivr.net/npm/gsap@3.15.0/dist/gsap.min.js"></script>
<script>
const tl = gsap.timeline({ paused: true });
for (const [i, x, y, at] of [${tweens.join(",")}]) {
  tl.to("#d" + i, { x, y, rotation: "+=45", duration: 0.9, ease: "power1.inOut" }, at);
}
tl.to("#clock", { x: -400, duration: ${SECONDS}, ease: "none" }, 0);
window.__timelines = { main: tl };
</script></div></body></html>`;
}

const dir = await mkdtemp(join(tmpdir(), "svc-bench-chunk-start-"));
if (flags.warm) {
  try {
    await warmVersusCold();
  } finally {
    await closeWarmPages();
    await rm(dir, { recursive: true, force: true });
  }
  process.exit(0);
}
try {
  const projectDir = join(dir, "project");
  await mkdir(projectDir);
  await writeFile(join(projectDir, "index.html"), composition());
  const length = segmentLength(FRAMES, FPS);
  const firstSegment = Math.floor(Number(flags.frame) / length);
  const chunk: Chunk = {
    index: 1,
    firstSegment,
    segmentCount: 1,
    firstFrame: firstSegment * length,
    frameCount: Math.min(length, FRAMES - firstSegment * length),
  };
  console.log(
    `chunk-start: ${flags.minutes} min at ${FPS} fps (${FRAMES} frames), chunk of ${chunk.frameCount} frames from frame ${chunk.firstFrame}, draft; load average ${loadavg()
      .map((n) => n.toFixed(1))
      .join(" ")}`,
  );
  const figures: Record<"jump" | "step", number[]> = { jump: [], step: [] };
  const hashes: Record<string, string[]> = {};
  for (let rep = 0; rep < Number(flags.reps); rep++) {
    for (const mode of rep % 2 === 0 ? (["jump", "step"] as const) : (["step", "jump"] as const)) {
      const outputDir = join(dir, `${mode}-${rep}`);
      const started = performance.now();
      const result = await renderChunk({
        projectDir,
        fps: FPS,
        quality: "draft",
        allowNetwork: false,
        chunk,
        frames: FRAMES,
        outputDir,
        catchUp: mode,
      });
      const wall = (performance.now() - started) / 1000;
      figures[mode].push(result.catchUp.ms);
      hashes[mode] ??= (await Promise.all(result.segmentFiles.map((f) => frameHashes(f)))).flat();
      console.log(
        `  rep ${rep + 1} ${mode}: page ready -> first frame ${(result.catchUp.ms / 1000).toFixed(2)} s (mode ${result.catchUp.mode}), chunk wall ${wall.toFixed(1)} s, load ${loadavg()[0]!.toFixed(1)}`,
      );
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  const same = hashes.jump!.filter((hash, i) => hash === hashes.step![i]).length;
  console.log(
    `median page ready -> first frame: jump ${(median(figures.jump) / 1000).toFixed(2)} s, step ${(median(figures.step) / 1000).toFixed(2)} s; jumped chunk frames equal to the stepped chunk's: ${same}/${hashes.step!.length}`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}

/** Consecutive 1-segment chunks of one render, cold and warm alternately. */
async function warmVersusCold(): Promise<void> {
  const projectDir = join(dir, "project");
  await mkdir(projectDir);
  await writeFile(join(projectDir, "index.html"), composition());
  const length = segmentLength(FRAMES, FPS);
  const count = Number(flags.chunks);
  console.log(
    `chunk overhead: ${count} consecutive chunks of ${length} frames, draft; load average ${loadavg()
      .map((n) => n.toFixed(1))
      .join(" ")}`,
  );
  const overheads: Record<"cold" | "warm", number[]> = { cold: [], warm: [] };
  for (let rep = 0; rep < Number(flags.reps); rep++) {
    for (const mode of rep % 2 === 0 ? (["cold", "warm"] as const) : (["warm", "cold"] as const)) {
      await closeWarmPages();
      for (let index = 0; index < count; index++) {
        const chunk: Chunk = {
          index,
          firstSegment: index,
          segmentCount: 1,
          firstFrame: index * length,
          frameCount: length,
        };
        let firstFrameAt = 0;
        let lastFrameAt = 0;
        const started = performance.now();
        const result = await renderChunk({
          projectDir,
          fps: FPS,
          quality: "draft",
          allowNetwork: false,
          chunk,
          frames: FRAMES,
          outputDir: join(dir, `${mode}-${rep}-${index}`),
          warm: mode === "warm",
          onProgress: (progress) => {
            if (progress.stage !== "capturing" || progress.framesDone === 0) return;
            firstFrameAt ||= performance.now();
            lastFrameAt = performance.now();
          },
        });
        const wall = performance.now() - started;
        const capture = lastFrameAt - firstFrameAt;
        // The first chunk of a warm run starts cold: only later chunks count for "warm".
        if (mode === "cold" || index > 0) overheads[mode].push((wall - capture) / 1000);
        console.log(
          `  rep ${rep + 1} ${mode} chunk ${index}: wall ${(wall / 1000).toFixed(2)} s, capture ${(capture / 1000).toFixed(2)} s, warm page ${result.warmPage}, catch-up ${result.catchUp.mode}, load ${loadavg()[0]!.toFixed(1)}`,
        );
      }
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  console.log(
    `median per-chunk overhead (wall - capture): cold ${median(overheads.cold).toFixed(2)} s, warm ${median(overheads.warm).toFixed(2)} s`,
  );
}
