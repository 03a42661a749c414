// npm run bench: render speed on fixed inputs (examples/hello-world, multi-scene, gsap-heavy, and
// bench/compositions/pan-floor, at 1080p30 standard) with three figures per composition, all
// measured in this run because the machine is noisy:
//   render        the real pipeline, capture overlapped with encoding
//   capture-only  the same pages and workers with frames thrown away (the capture limit)
//   encode-only   the same frames fed to the same encoders, no browser
// and the ratio of render wall time to the capture-only limit (target <= 1.3). pan-floor changes
// every pixel of every frame while the page does almost no work, so its rate is the ceiling of the
// pipeline itself (compositing, read-back, JPEG, decode, x264) for any fully animated composition.
// Each figure is the best of --reps runs, render and capture-only alternating, so a burst of
// load from elsewhere hits both sides alike instead of skewing the ratio.
// Usage: npm run bench [-- --workers N|auto] [--only name] [--fps 30] [--reps 2]
// Side by side with the reference renderer (bench/vs-reference.ts):
//   npm run bench -- --vs-reference [--only a,b] [--tiers standard,draft] [--reps 3]
//                    [--results bench/results/vs-reference.json]
// Held-frame skipping on and off, alternating (default pan-floor, where every pixel changes on
// every frame, so skipping can only cost): npm run bench -- --dedup-ab [--only name] [--reps 3]
// Does svc draw what the reference draws, on the compatibility corpus (bench/compat.ts):
//   npm run bench -- --compat [--only a,b] [--fps 10] [--keep DIR] [--corpus DIR] [--vendor DIR]
//                    [--svc-root DIR]  (svc from another checkout, e.g. the commit before a change)
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SegmentEncoder } from "../src/engine/ffmpeg/encode";
import { machineCpu } from "./cpu";
import { runVsReference, type Tier } from "./vs-reference";
import { runCompat } from "./compat";
import { resolveFfmpeg } from "../src/engine/ffmpeg/ffmpeg";
import {
  renderComposition,
  resolveWorkers,
  segmentLength,
  type FrameSink,
} from "../src/engine/render";

interface Args {
  workers: number | "auto";
  only: string | undefined;
  fps: number;
  /** Whether --fps was given (the compat bench defaults to 10, the others to 30). */
  fpsGiven: boolean;
  reps: number | undefined;
  vsReference: boolean;
  compat: boolean;
  dedupAb: boolean;
  tiers: Tier[];
  results: string | undefined;
  keep: string | undefined;
  corpus: string | undefined;
  vendor: string | undefined;
  /** Another checkout whose svc the compat bench runs (an A B A B against an earlier commit). */
  svcRoot: string | undefined;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    workers: "auto",
    only: undefined,
    fps: 30,
    fpsGiven: false,
    reps: undefined,
    vsReference: false,
    compat: false,
    dedupAb: false,
    tiers: ["standard", "draft"],
    results: undefined,
    keep: undefined,
    corpus: undefined,
    vendor: undefined,
    svcRoot: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    if (argv[i] === "--workers" && value) args.workers = value === "auto" ? "auto" : Number(value);
    if (argv[i] === "--only" && value) args.only = value;
    if (argv[i] === "--fps" && value) {
      args.fps = Number(value);
      args.fpsGiven = true;
    }
    if (argv[i] === "--compat") args.compat = true;
    if (argv[i] === "--reps" && value) args.reps = Math.max(1, Number(value));
    if (argv[i] === "--vs-reference") args.vsReference = true;
    if (argv[i] === "--dedup-ab") args.dedupAb = true;
    if (argv[i] === "--tiers" && value) args.tiers = value.split(",") as Tier[];
    if (argv[i] === "--results" && value) args.results = value;
    if (argv[i] === "--keep" && value) args.keep = resolve(value);
    if (argv[i] === "--corpus" && value) args.corpus = resolve(value);
    if (argv[i] === "--vendor" && value) args.vendor = resolve(value);
    if (argv[i] === "--svc-root" && value) args.svcRoot = resolve(value);
  }
  return args;
}

/** The bench corpus: the examples, the pipeline's floor, and compositions written as people do. */
const COMPOSITIONS: Record<string, string> = {
  "hello-world": "../examples/hello-world",
  "multi-scene": "../examples/multi-scene",
  "gsap-heavy": "../examples/gsap-heavy",
  "pan-floor": "compositions/pan-floor",
  "chart-hold": "compositions/chart-hold",
  "text-explainer": "compositions/text-explainer",
  "social-vertical": "compositions/social-vertical",
};

interface Row {
  name: string;
  frames: number;
  renderFps: number;
  captureFps: number;
  encodeFps: number;
  ratio: number;
}

async function measure(name: string, args: Args, workDir: string): Promise<Row> {
  const projectDir = resolve(import.meta.dirname, COMPOSITIONS[name]!);
  const base = {
    projectDir,
    fps: args.fps,
    quality: "standard" as const,
    workers: args.workers,
    allowNetwork: false,
  };

  // Warm-up: first launches unpack caches and JIT; not measured.
  await renderComposition(
    { ...base, output: join(workDir, `${name}-warm.mp4`) },
    { captureOnly: true, sinkForSegment: discardSink },
  );

  let renderSeconds = Infinity;
  let captureSeconds = Infinity;
  let rendered: Awaited<ReturnType<typeof renderComposition>> | undefined;
  const captured = new Map<number, (Buffer | null)[]>();
  for (let rep = 0; rep < reps; rep++) {
    let started = performance.now();
    rendered = await renderComposition({
      ...base,
      output: join(workDir, `${name}.mp4`),
      thumbnail: false,
    });
    renderSeconds = Math.min(renderSeconds, (performance.now() - started) / 1000);

    captured.clear();
    started = performance.now();
    await renderComposition(
      { ...base, output: join(workDir, `${name}-capture.mp4`) },
      {
        captureOnly: true,
        sinkForSegment: (index) => {
          const frames: (Buffer | null)[] = [];
          captured.set(index, frames);
          return {
            write: async (frame) => void frames.push(frame),
            finish: async () => undefined,
            kill: () => undefined,
          };
        },
      },
    );
    captureSeconds = Math.min(captureSeconds, (performance.now() - started) / 1000);
  }
  if (!rendered) throw new Error("no render ran");

  const ffmpeg = await resolveFfmpeg();
  const segments = [...captured.keys()].sort((a, b) => a - b);
  const workers = resolveWorkers(args.workers, segments.length);
  let encodeSeconds = Infinity;
  for (let rep = 0; rep < reps; rep++) {
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        for (let i = next++; i < segments.length; i = next++) {
          const encoder = new SegmentEncoder({
            ffmpegPath: ffmpeg.path,
            output: join(workDir, `${name}-encode-${i}.mkv`),
            frames: captured.get(segments[i]!)!.length,
            fps: args.fps,
            format: "mp4",
            quality: "standard",
            imageFormat: "jpeg",
            size: { width: rendered.width, height: rendered.height },
          });
          for (const frame of captured.get(segments[i]!)!) await encoder.write(frame);
          await encoder.finish();
        }
      }),
    );
    encodeSeconds = Math.min(encodeSeconds, (performance.now() - started) / 1000);
  }

  return {
    name,
    frames: rendered.frames,
    renderFps: rendered.frames / renderSeconds,
    captureFps: rendered.frames / captureSeconds,
    encodeFps: rendered.frames / encodeSeconds,
    ratio: renderSeconds / captureSeconds,
  };
}

/**
 * The same render with held-frame skipping on and off, alternating on off, off on, ..., printing wall
 * time and whole-machine CPU (/proc/stat) of each and the median ratio off / on.
 */
async function dedupAb(name: string, reps: number): Promise<void> {
  const projectDir = resolve(import.meta.dirname, COMPOSITIONS[name]!);
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-dedup-"));
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
  try {
    const base = {
      projectDir,
      fps: args.fps,
      quality: "standard" as const,
      workers: args.workers,
      allowNetwork: false,
      thumbnail: false,
    };
    await renderComposition(
      { ...base, output: join(dir, "warm.mp4") },
      { captureOnly: true, sinkForSegment: discardSink },
    );
    console.log(
      `dedup on/off: ${name}, 1080p${args.fps} standard, workers ${args.workers}, ${reps} pairs (load average ${loadavg()[0]!.toFixed(1)})`,
    );
    const ratios: { wall: number; cpu: number }[] = [];
    for (let rep = 0; rep < reps; rep++) {
      const figures: Record<"on" | "off", { wall: number; cpu: number; repeated: number }> = {
        on: { wall: 0, cpu: 0, repeated: 0 },
        off: { wall: 0, cpu: 0, repeated: 0 },
      };
      // The first of a pair runs on a cooler or hotter machine than the second: swap the order
      // every pair (on off, off on, ...) so that does not favour one side.
      const order = rep % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const);
      for (const side of order) {
        const cpuBefore = await machineCpu();
        const started = performance.now();
        const result = await renderComposition(
          { ...base, output: join(dir, `${side}.mp4`) },
          { noDedup: side === "off" },
        );
        figures[side] = {
          wall: (performance.now() - started) / 1000,
          cpu: ((await machineCpu()).busy - cpuBefore.busy) / result.frames,
          repeated: result.repeatedFrames,
        };
      }
      ratios.push({
        wall: figures.off.wall / figures.on.wall,
        cpu: figures.off.cpu / figures.on.cpu,
      });
      console.log(
        `pair ${rep + 1}: on ${figures.on.wall.toFixed(1)} s, ${(figures.on.cpu * 1000).toFixed(0)} ms CPU/frame (${figures.on.repeated} repeated) | off ${figures.off.wall.toFixed(1)} s, ${(figures.off.cpu * 1000).toFixed(0)} ms CPU/frame`,
      );
    }
    console.log(
      `median off/on: wall ${median(ratios.map((r) => r.wall)).toFixed(2)}x, machine CPU per frame ${median(ratios.map((r) => r.cpu)).toFixed(2)}x (above 1: skipping is faster)`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const discardSink = (): FrameSink => ({
  write: async () => undefined,
  finish: async () => undefined,
  kill: () => undefined,
});

const args = parseArgs(process.argv.slice(2));
if (args.vsReference) {
  await runVsReference({
    compositions: COMPOSITIONS,
    only: args.only,
    tiers: args.tiers,
    reps: args.reps ?? 3,
    fps: args.fps,
    workers: args.workers === "auto" ? 2 : args.workers,
    svcEnv: {},
    resultsFile: args.results,
    keepDir: args.keep,
  });
  process.exit(0);
}
if (args.compat) {
  await runCompat({
    only: args.only,
    fps: args.fpsGiven ? args.fps : 10,
    workers: args.workers === "auto" ? 2 : args.workers,
    keepDir: args.keep,
    corpusDir: args.corpus,
    vendorDir: args.vendor,
    svcRoot: args.svcRoot,
  });
  process.exit(0);
}
if (args.dedupAb) {
  await dedupAb(args.only ?? "pan-floor", args.reps ?? 3);
  process.exit(0);
}
const reps = args.reps ?? 2;
const workDir = await mkdtemp(join(tmpdir(), "svc-bench-"));
try {
  console.log(
    `svc render benchmark: 1080p, ${args.fps} fps, standard quality, workers ${args.workers}, best of ${reps} runs (load average ${loadavg()[0]!.toFixed(1)})`,
  );
  console.log(`segment length for 12 s: ${segmentLength(12 * args.fps, args.fps)} frames`);
  const rows: Row[] = [];
  for (const name of Object.keys(COMPOSITIONS).filter((n) => !args.only || n === args.only)) {
    const row = await measure(name, args, workDir);
    rows.push(row);
    console.log(
      `${row.name.padEnd(12)} ${String(row.frames).padStart(4)} frames | render ${row.renderFps.toFixed(1).padStart(5)} fps | capture-only ${row.captureFps.toFixed(1).padStart(5)} fps | encode-only ${row.encodeFps.toFixed(1).padStart(6)} fps | render/capture-only wall ${row.ratio.toFixed(2)}x`,
    );
  }
} finally {
  await rm(workDir, { recursive: true, force: true });
}
