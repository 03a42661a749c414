// What the maintained FFmpeg for customers' media costs (issue 41): the audio mix of a render
// (render-finish.ts, chunks.ts) runs the FFmpeg on PATH (Debian's 5.1) instead of the static 2018
// build, once per render; segments keep the static build. Measures, alternating A B A B:
//   start-up  `ffmpeg -hide_banner -version`, wall and CPU (user+sys) of the child
//   mix       4 one-second segments joined (copy) with a WAV and a video's sound mixed in (AAC),
//             the shape of muxArgs
//   segment   one 2 s segment encoded from raw frames on stdin (libx264 veryfast), what every
//             segment of a render costs, for scale
// Usage: node bench/media-ffmpeg.ts [rounds=5]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { resolveFfmpeg, resolveMediaFfmpeg } from "../src/engine/ffmpeg/ffmpeg";

const ROUNDS = Number(process.argv[2] ?? 5);
const TONE = resolve(import.meta.dirname, "../examples/with-audio/tone.wav");

interface Cost {
  wallMs: number;
  cpuMs: number;
}

/** Runs a command under /usr/bin/time; its wall and CPU (user+sys) in ms. */
function timed(command: string, args: string[], input?: Buffer): Cost {
  const result = spawnSync("/usr/bin/time", ["-f", "TIME %e %U %S", command, ...args], {
    input,
    maxBuffer: 64 * 1024 * 1024,
  });
  const line = /TIME ([\d.]+) ([\d.]+) ([\d.]+)/.exec(result.stderr.toString());
  if (result.status !== 0 || !line) throw new Error(`${command} failed: ${result.stderr}`);
  return { wallMs: Number(line[1]) * 1000, cpuMs: (Number(line[2]) + Number(line[3])) * 1000 };
}

function loadAverage(): Promise<string> {
  return readFile("/proc/loadavg", "utf8").then((text) => text.split(" ").slice(0, 3).join(" "));
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

async function main(): Promise<void> {
  const fast = (await resolveFfmpeg()).path;
  const media = (await resolveMediaFfmpeg()).path;
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-media-ffmpeg-"));
  try {
    const segments: string[] = [];
    for (let i = 0; i < 4; i++) {
      const file = join(dir, `segment-${i}.mp4`);
      execFileSync(fast, [
        ...["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi"],
        ...["-i", `testsrc=size=1280x720:rate=30:duration=1`, "-c:v", "libx264", file],
      ]);
      segments.push(file);
    }
    const list = join(dir, "segments.txt");
    await writeFile(list, segments.map((s) => `file '${s}'`).join("\n") + "\n");
    const clip = join(dir, "clip.mp4");
    execFileSync(media, [
      ...["-hide_banner", "-loglevel", "error", "-y"],
      ...["-f", "lavfi", "-i", "testsrc=size=320x180:rate=30:duration=4"],
      ...["-f", "lavfi", "-i", "sine=frequency=330:duration=4"],
      ...["-c:v", "libx264", "-c:a", "aac", "-shortest", clip],
    ]);
    const mixArgs = (out: string) => [
      ...["-hide_banner", "-loglevel", "error", "-y", "-f", "concat", "-safe", "0", "-i", list],
      ...["-i", TONE, "-i", clip],
      "-filter_complex",
      "[1:a]aformat=sample_rates=48000:channel_layouts=stereo,adelay=500|500,volume=0.8[a1];" +
        "[2:a]aformat=sample_rates=48000:channel_layouts=stereo,volume=0.5[a2];" +
        "[a1][a2]amix=inputs=2,apad[aout]",
      ...["-map", "0:v", "-map", "[aout]", "-c:v", "copy", "-c:a", "aac", "-t", "4", out],
    ];
    const frames = Buffer.alloc(1280 * 720 * 4 * 60, 0x40);
    const segmentArgs = (out: string) => [
      ...["-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgba"],
      ...["-s", "1280x720", "-r", "30", "-i", "-", "-c:v", "libx264", "-preset", "veryfast"],
      ...["-pix_fmt", "yuv420p", out],
    ];
    const results: Record<string, Record<string, Cost[]>> = { static: {}, debian: {} };
    const loadBefore = await loadAverage();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, path] of [
        ["static", fast],
        ["debian", media],
      ] as const) {
        const add = (kind: string, cost: Cost) => (results[name]![kind] ??= []).push(cost);
        for (let i = 0; i < 5; i++) add("start-up", timed(path, ["-hide_banner", "-version"]));
        add("mix", timed(path, mixArgs(join(dir, `mix-${name}.mp4`))));
        add("segment", timed(path, segmentArgs(join(dir, `seg-${name}.mp4`)), frames));
      }
    }
    const loadAfter = await loadAverage();
    console.log(`rounds ${ROUNDS} (A B A B); load average ${loadBefore} -> ${loadAfter}`);
    console.log(`static: ${fast}\ndebian: ${media}`);
    for (const kind of ["start-up", "mix", "segment"]) {
      const row = (name: string) => {
        const costs = results[name]![kind]!;
        return {
          wall: median(costs.map((c) => c.wallMs)),
          cpu: median(costs.map((c) => c.cpuMs)),
        };
      };
      const a = row("static");
      const b = row("debian");
      console.log(
        `${kind.padEnd(9)} static wall ${a.wall.toFixed(0)} ms cpu ${a.cpu.toFixed(0)} ms | ` +
          `debian wall ${b.wall.toFixed(0)} ms cpu ${b.cpu.toFixed(0)} ms | ` +
          `debian/static wall ${(b.wall / a.wall).toFixed(2)}x cpu ${(b.cpu / Math.max(1, a.cpu)).toFixed(2)}x`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
