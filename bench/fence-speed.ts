// Issue 41: what the page fence costs a closed render. A B A B in one run, each render its own
// process in its own cpuacct cgroup (bench/cpu.ts), so the figures are the render's own CPU
// (browser, FFmpeg, Node) and not the rest of a shared machine's:
//   before   the engine of --baseline (a checkout of main before the fence was the default:
//            closed pages filtered by the DevTools Fetch domain, the browser as root)
//   fence    this checkout: a network namespace, the browser as uid 65534 under root, the
//            project's files answered by svc (Fetch.fulfillRequest), Chromium's sandbox off
//            (SVC_BROWSER_SANDBOX=0: one process)
//   sandbox  the fence and Chromium's sandbox (the default since: several processes)
//   switches this checkout with the closing switches only (SVC_BROWSER_NAMESPACE=0: no namespace,
//            no sandbox, one process): this engine's closed render before the fence, so the
//            fence and the sandbox are measured without the rest of what changed since --baseline
// Ratios are against the first mode of --modes.
// Run: npx tsx bench/fence-speed.ts -- --baseline /work/main [--reps 2] [--only hello-world] [--fps 10]
//      [--modes before,fence,sandbox]
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { runMeasured } from "./cpu";
import type * as Engine from "../src/engine/render";

const { values: flags } = parseArgs({
  options: {
    baseline: { type: "string", default: "/work/main" },
    reps: { type: "string", default: "2" },
    only: { type: "string", default: "hello-world" },
    modes: { type: "string", default: "before,fence,sandbox" },
    one: { type: "string" },
    project: { type: "string" },
    fps: { type: "string", default: "10" },
  },
  allowPositionals: true,
});

const here = resolve(import.meta.dirname, "..");

if (flags.one) {
  // One render, in this process: the engine of the checkout at --one.
  const engine: typeof Engine = await import(join(flags.one, "src/engine/render.ts"));
  const { renderComposition } = engine;
  const { mkdtemp, rm } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const scratch = await mkdtemp(join(tmpdir(), "fence-speed-"));
  const started = performance.now();
  const result = await renderComposition({
    projectDir: flags.project!,
    output: join(scratch, "out.mp4"),
    quality: "standard",
    fps: Number(flags.fps),
    allowNetwork: false,
    thumbnail: false,
  });
  const seconds = (performance.now() - started) / 1000;
  // runMeasured keeps the child's stderr, not its stdout.
  console.error(JSON.stringify({ seconds, frames: result.frames, warnings: result.warnings }));
  await rm(scratch, { recursive: true, force: true });
  process.exit(0);
}

const projects: Record<string, string> = {
  "hello-world": join(here, "examples/hello-world"),
  "gsap-heavy": join(here, "examples/gsap-heavy"),
  "photo-slideshow": join(here, "gallery/photo-slideshow"),
  "social-vertical": join(here, "bench/compositions/social-vertical"),
};
const modes = flags.modes.split(",");
const tsx = join(here, "node_modules/.bin/tsx");
const rows: Record<string, { seconds: number[]; cpu: number[]; frames: number }> = {};
for (const name of flags.only.split(",")) {
  for (let rep = 0; rep < Number(flags.reps); rep++) {
    for (const mode of modes) {
      const root = mode === "before" ? resolve(flags.baseline) : here;
      const env = { ...process.env };
      delete env.SVC_BROWSER_NAMESPACE;
      delete env.SVC_BROWSER_SANDBOX;
      if (mode === "fence") env.SVC_BROWSER_SANDBOX = "0";
      if (mode === "switches") env.SVC_BROWSER_NAMESPACE = "0";
      const load = loadavg()[0]!;
      const run = await runMeasured(
        tsx,
        [
          join(here, "bench/fence-speed.ts"),
          ...["--one", root, "--project", projects[name]!, "--fps", flags.fps],
        ],
        { env, cwd: here },
      );
      const line =
        run.stderrTail
          .trim()
          .split("\n")
          .findLast((text) => text.startsWith('{"seconds"')) ?? "";
      const parsed = JSON.parse(line || "{}") as { seconds?: number; frames?: number };
      const cpu = run.tree?.busy ?? run.machine.busy;
      const machineCpu = run.machine.busy;
      const key = `${name} ${mode}`;
      rows[key] ??= { seconds: [], cpu: [], frames: parsed.frames ?? 0 };
      rows[key].seconds.push(parsed.seconds ?? NaN);
      rows[key].cpu.push(cpu);
      console.log(
        `${key} rep ${rep + 1}: render ${parsed.seconds?.toFixed(1)} s, CPU ${cpu.toFixed(1)} core-s (${run.tree ? "cgroup" : "machine"}; machine /proc/stat ${machineCpu.toFixed(1)}), load ${load.toFixed(1)}, exit ${run.exitCode}, left-over processes ${run.leftovers}`,
      );
    }
  }
}
console.log("\nmedian of reps:");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
for (const [key, row] of Object.entries(rows)) {
  const name = key.split(" ")[0];
  const baseMode = modes[0]!;
  const base = rows[`${name} ${baseMode}`];
  const ratio = base ? median(row.cpu) / median(base.cpu) : NaN;
  const wallRatio = base ? median(row.seconds) / median(base.seconds) : NaN;
  console.log(
    `${key}: ${row.frames} frames, wall ${median(row.seconds).toFixed(1)} s, CPU ${median(row.cpu).toFixed(1)} core-s, vs ${baseMode}: CPU ${ratio.toFixed(3)}, wall ${wallRatio.toFixed(3)}`,
  );
}
console.log(
  `load average at the end: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
