// `npm run bench -- --compat`: does svc draw what the reference renderer (npm `hyperframes`,
// installed by bench/reference/setup.sh) draws, on compositions nobody here wrote? The corpus is
// bench/compat/corpus.json (catalog blocks and components of the reference's public repository and
// the project its `init` writes; bench/compat/build-corpus.ts). For each composition both CLIs
// render it, one after the other, at the same fps and standard quality, and the two videos are
// compared frame n against frame n (never by timestamp: commit c7105b2):
//   ssim      FFmpeg's SSIM of each frame pair: mean, minimum, and the worst frame's index
//   diff      the largest share, over the frames, of visibly different pixels (both frames scaled
//             to 480x270 grey, luma differing by more than 24 of 255). SSIM alone hides a missing
//             chart line or label; this does not.
//   wall      svc wall time / reference wall time
//   cpu       svc CPU time / reference CPU time (user + system of the render's process tree, as
//             /usr/bin/time counts it: every process the CLI waited for, browsers included); on a
//             shared machine the wall ratio follows the load, the CPU ratio much less
// plus both exit statuses and error messages. The worst frame of each pair (most visibly
// different; lowest SSIM when none differ) is written side by side, svc left, reference right, as
// bench/results/compat/<name>.png. A composition passes at SSIM mean >= 0.98 and diff <= 0.5%.
// svc gets the project as it is (it answers CDN URLs from npm packages itself, src/engine/browser/network.ts);
// the reference, which cannot reach a CDN here, gets a copy with those URLs pointed at local copies
// of the same files (GSAP, npm files, Google Fonts stylesheets and their font files).
// Usage: npm run bench -- --compat [--only a,b] [--fps 10] [--keep DIR] [--corpus DIR] [--vendor DIR]
// [--svc-root DIR] (--svc-root: svc from another checkout, for an A B A B against it; --corpus: another corpus.json's folder, e.g. the rest of the catalog for a sweep:
// `npx tsx bench/compat/build-corpus.ts --all --out bench/results/sweep`; --vendor: a folder of
// npm packages unpacked as <package>@<version>/ for the CDN libraries svc does not answer, three,
// d3, map atlases, given to both renderers as local copies: offline neither could fetch them)
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import {
  copyFile,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  writeFile,
} from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { promisify } from "node:util";
import { cdnAnswer, googleFontsCss, gsapFileForUrl, npmFileForUrl } from "../src/node/cdn-files";
import { CDN_URL_IN_TEXT, npmFileForCdnUrl } from "../src/shared/cdn";
import { probeMedia } from "../src/engine/testing/probe";
import { resolveFfmpeg } from "../src/engine/ffmpeg/ffmpeg";
import { HYPERFRAMES, NODE22, REFERENCE_ENV } from "./vs-reference";

const execFileAsync = promisify(execFile);
const HERE = import.meta.dirname;
const ROOT = resolve(HERE, "..");
const CORPUS = join(HERE, "compat", "corpus.json");
const RESULTS = join(ROOT, "bench", "results", "compat");

/** The acceptance bar of issue 28. */
export const SSIM_MEAN_BAR = 0.98;
export const DIFF_SHARE_BAR = 0.005;
/** The visible-difference measure: frames scaled to this grey size, this luma step. */
export const DIFF_WIDTH = 480;
export const DIFF_HEIGHT = 270;
export const DIFF_THRESHOLD = 24;
/** A render that takes longer is stopped and counted as failed (svc has stalled on media). */
const RENDER_TIMEOUT_MS = 15 * 60_000;

export interface CompatArgs {
  only: string | undefined;
  fps: number;
  workers: number;
  keepDir: string | undefined;
  /**
   * A folder holding another corpus.json (and the projects it names, relative to it), e.g. the
   * rest of the catalog that `build-corpus.ts --all --out DIR` writes; default the committed one.
   */
  corpusDir?: string;
  /** npm packages unpacked as `<package>@<version>/` for CDN URLs svc does not answer (a sweep). */
  vendorDir?: string;
  /** The checkout whose `bin/svc.js` renders (default this one): an A B A B against another. */
  svcRoot?: string;
}

interface CorpusItem {
  name: string;
  project: string;
  kind: string;
  covers: string;
  source: string;
  /**
   * Set when the composition misses the bar for a measured reason that is the reference's, not
   * svc's: one line naming the cause, with the measurement in bench/README.md.
   */
  exception?: string;
  /**
   * Media files the project expects but the corpus does not commit, made at staging by FFmpeg
   * (`standInMedia`): project-relative path -> kind. The feature corpus's videos are all the same
   * moving test pattern, which shows an offset of one frame or one pixel.
   */
  media?: Record<string, StandInKind>;
}

interface SideResult {
  exitCode: number | null;
  /** The last lines of stderr that say what went wrong, when it failed. */
  error: string | undefined;
  wallSeconds: number;
  /** User + system seconds of the render and the processes it waited for (undefined: not measured). */
  cpuSeconds?: number;
  frames: number;
}

export interface CompatRow {
  name: string;
  svc: SideResult;
  reference: SideResult;
  ssimMean?: number;
  ssimMin?: number;
  ssimWorstFrame?: number;
  diffMax?: number;
  diffWorstFrame?: number;
  /** svc wall / reference wall. */
  wallRatio?: number;
  cpuRatio?: number;
  passes?: boolean;
  /** The corpus's documented reason when it misses the bar because of the reference. */
  exception?: string;
  png?: string;
}

// ---- the feature corpus ----

/**
 * The stand-in media a feature item may ask for: a 60 s 1280x720 25 fps FFmpeg testsrc2 clip with
 * a 440 Hz tone (H.264 + AAC, untagged colour, as a phone or an editor's export often is), the
 * same clip tagged BT.709, a 60 s tone alone, and a testsrc2 WebM (VP9 + Opus).
 */
export type StandInKind = "testsrc2" | "testsrc2-bt709" | "testsrc2-webm" | "tone";

/** The moving pattern and its tone, 60 s, as FFmpeg inputs. */
const TESTSRC2_INPUTS = [
  ...["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25:duration=60"],
  ...["-f", "lavfi", "-i", "sine=frequency=440:duration=60"],
];
const H264 = ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-g", "50"];
const BT709_TAGS = ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709"];

const STAND_IN_ARGS: Record<StandInKind, { ext: string; args: string[] }> = {
  testsrc2: { ext: "mp4", args: [...TESTSRC2_INPUTS, ...H264, "-c:a", "aac", "-shortest"] },
  "testsrc2-bt709": {
    ext: "mp4",
    args: [
      ...TESTSRC2_INPUTS,
      ...H264,
      ...BT709_TAGS,
      "-color_range",
      "tv",
      "-c:a",
      "aac",
      "-shortest",
    ],
  },
  "testsrc2-webm": {
    ext: "webm",
    args: [
      ...TESTSRC2_INPUTS,
      ...["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "2M"],
      ...["-c:a", "libopus", "-shortest"],
    ],
  },
  tone: {
    ext: "m4a",
    args: ["-f", "lavfi", "-i", "sine=frequency=440:duration=60", "-c:a", "aac"],
  },
};

/** Makes (once per bench run) the stand-in file of a kind in `cacheDir`, and returns its path. */
async function standInMedia(kind: StandInKind, cacheDir: string): Promise<string> {
  const spec = STAND_IN_ARGS[kind];
  if (!spec)
    throw new Error(
      `Unknown stand-in media kind "${kind}" (one of ${Object.keys(STAND_IN_ARGS).join(", ")})`,
    );
  const file = join(cacheDir, `${kind}.${spec.ext}`);
  if (existsSync(file)) return file;
  await mkdir(cacheDir, { recursive: true });
  const { path: ffmpeg } = await resolveFfmpeg();
  const partial = `${file}.partial.${spec.ext}`;
  await execFileAsync(ffmpeg, ["-hide_banner", "-loglevel", "error", "-y", ...spec.args, partial]);
  await rename(partial, file);
  return file;
}

/**
 * A folder of feature items (bench/compat/features): each subfolder is one project with a
 * `feature.json` ({ covers, contract?, media?, exception? }) beside its index.html. The corpus is
 * the folders themselves, so adding an item is adding a folder.
 */
async function featureItems(dir: string): Promise<CorpusItem[]> {
  const items: CorpusItem[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const metaFile = join(dir, entry.name, "feature.json");
    if (!entry.isDirectory() || !existsSync(metaFile)) continue;
    const meta = JSON.parse(await readFile(metaFile, "utf8")) as Partial<CorpusItem>;
    items.push({
      name: entry.name,
      project: entry.name,
      kind: "feature",
      covers: meta.covers ?? "",
      source: "svc's own feature corpus",
      ...(meta.exception ? { exception: meta.exception } : {}),
      ...(meta.media ? { media: meta.media } : {}),
    });
  }
  if (items.length === 0) throw new Error(`${dir} has neither a corpus.json nor feature folders`);
  return items;
}

// ---- pure parts (compat.test.ts) ----

/**
 * Share of pixels whose luma differs by more than `threshold` between two grey frames of the same
 * size (one byte per pixel).
 */
export function visibleDiffShare(a: Uint8Array, b: Uint8Array, threshold = DIFF_THRESHOLD): number {
  if (a.length !== b.length) throw new Error(`frames differ in size: ${a.length} vs ${b.length}`);
  if (a.length === 0) return 0;
  let differing = 0;
  for (let i = 0; i < a.length; i++) {
    const delta = a[i]! - b[i]!;
    if (delta > threshold || delta < -threshold) differing++;
  }
  return differing / a.length;
}

/**
 * The frame pairs to compare: frame n of one against frame n of the other, for every n both have.
 * Frames only one side has are not paired (the counts are printed separately).
 */
export function pairFrames(framesA: number, framesB: number): number[] {
  return Array.from({ length: Math.max(0, Math.min(framesA, framesB)) }, (_, n) => n);
}

/** Splits raw grey video (`frameSize` bytes a frame) into frames. */
export function splitFrames(raw: Uint8Array, frameSize: number): Uint8Array[] {
  const frames: Uint8Array[] = [];
  for (let at = 0; at + frameSize <= raw.length; at += frameSize) {
    frames.push(raw.subarray(at, at + frameSize));
  }
  return frames;
}

/** Per-frame SSIM ("All") from the lines of FFmpeg's ssim stats_file, in frame order. */
export function parseSsimStats(stats: string): number[] {
  const values: number[] = [];
  for (const line of stats.split("\n")) {
    const match = /^n:(\d+)\b.*\bAll:([\d.]+|inf)/.exec(line.trim());
    if (match) values[Number(match[1]) - 1] = match[2] === "inf" ? 1 : Number(match[2]);
  }
  return values;
}

/** The worst frame: the most visibly different one, or the lowest SSIM when none differ. */
export function worstFrame(ssim: number[], diff: number[]): number {
  const maxDiff = Math.max(0, ...diff);
  if (maxDiff > 0) return diff.indexOf(maxDiff);
  let worst = 0;
  ssim.forEach((value, n) => {
    if (value < ssim[worst]!) worst = n;
  });
  return worst;
}

export function median(values: number[]): number | undefined {
  if (!values.length) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The lines of a failed render's stderr worth printing: errors, not progress bars. */
export function errorLines(stderr: string): string | undefined {
  const lines = stderr
    // eslint-disable-next-line no-control-regex -- terminal colour codes
    .replace(/\x1b\[[0-9;]*[A-Za-z]/g, "")
    .split(/[\r\n]+/)
    .map((line) => line.trim())
    .filter((line) => line && !/^\[?[=#>\-. ]*\]?\s*\d+(\.\d+)?%/.test(line));
  const errors = lines.filter((line) =>
    /error|fail|threw|cannot|could not|timed? ?out|refus/i.test(line),
  );
  const chosen = (errors.length ? errors : lines).slice(-3);
  return chosen.length ? chosen.join(" / ").slice(0, 400) : undefined;
}

// ---- staging ----

async function htmlAndCssFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await htmlAndCssFiles(path)));
    else if (/\.(html?|css)$/.test(entry.name)) found.push(path);
  }
  return found;
}

/**
 * A sweep's file for a CDN URL svc does not answer (three, d3, map atlases...): the package as
 * `npm pack` unpacks it, in `vendorDir/<package>@<version as the URL writes it>/`. Offline, neither
 * renderer could fetch it; online both would.
 */
export function vendoredFileForUrl(url: string, vendorDir: string): string | undefined {
  const request = npmFileForCdnUrl(url);
  if (!request) return undefined;
  const root = join(vendorDir, `${request.packageName}@${request.version}`);
  const file = join(root, request.path);
  return file.startsWith(root + "/") && existsSync(file) ? file : undefined;
}

/**
 * A copy of a project for a renderer. For the reference (`forReference`), every CDN URL svc
 * answers locally is pointed at a copy of the same bytes under vendor/ (Google Fonts stylesheets
 * rebuilt with relative font URLs); for both, so are URLs `vendorDir` holds (a sweep's --vendor).
 */
export async function stageProject(
  source: string,
  target: string,
  options: { forReference: boolean; vendorDir?: string | undefined },
): Promise<string[]> {
  // Symlinks as written: a relative link inside the project stays inside the copy (resolved, it
  // would point back into the source folder, which svc refuses as leaving the project).
  await cp(source, target, { recursive: true, verbatimSymlinks: true });
  const vendor = join(target, "vendor");
  const staged: string[] = [];
  let counter = 0;
  for (const file of await htmlAndCssFiles(target)) {
    const text = await readFile(file, "utf8");
    // "./" so that an ES module import of it is a relative specifier, not a bare one.
    const toVendor = (relative(dirname(file), vendor) || ".").replace(/^(?!\.)/, "./");
    let changed = false;
    const replacements = new Map<string, string>();
    for (const match of text.matchAll(CDN_URL_IN_TEXT)) {
      const url = match[0];
      if (replacements.has(url)) continue;
      const decoded = url.replace(/&amp;/g, "&");
      const fonts = options.forReference
        ? googleFontsCss(decoded, (font) =>
            join("fonts", font.packageName.replace("/", "+"), basename(font.path)),
          )
        : undefined;
      let local: string | undefined;
      if (fonts) {
        const name = `fonts-${counter++}.css`;
        await mkdir(vendor, { recursive: true });
        await writeFile(join(vendor, name), fonts.css);
        for (const font of fonts.fonts) {
          const to = join(vendor, "fonts", font.packageName.replace("/", "+"), basename(font.path));
          await mkdir(dirname(to), { recursive: true });
          if (!existsSync(to)) await copyFile(font.file, to);
        }
        local = name;
      } else {
        const gsap = gsapFileForUrl(decoded);
        // Any other npm library: the same bytes svc's render gets (the npm registry through the
        // library cache), with the relative modules it imports, so both draw with one version.
        const fromNpm =
          !gsap && npmFileForCdnUrl(decoded)
            ? await cdnAnswer(decoded).catch(() => undefined)
            : undefined;
        const answeredBySvc = gsap ?? (fromNpm?.file ? undefined : npmFileForUrl(decoded));
        const vendored =
          options.vendorDir && !answeredBySvc && !fromNpm?.file
            ? vendoredFileForUrl(decoded, options.vendorDir)
            : undefined;
        const file = (options.forReference ? answeredBySvc : undefined) ?? vendored;
        if (options.forReference && fromNpm?.file && fromNpm.library && !vendored) {
          local = await stageNpmFile(decoded, vendor);
        } else if (vendored) {
          // With its folder: an ES module imports its siblings (three.module.js: ./three.core.js).
          const name = `${counter++}-${basename(dirname(vendored))}`;
          await cp(dirname(vendored), join(vendor, name), { recursive: true });
          local = `${name}/${basename(vendored)}`;
        } else if (file) {
          const name = `${counter++}-${basename(file)}`;
          await mkdir(vendor, { recursive: true });
          await copyFile(file, join(vendor, name));
          local = name;
        }
      }
      if (local) {
        replacements.set(url, `${toVendor}/${local}`);
        staged.push(decoded);
        changed = true;
      }
    }
    if (changed) {
      await writeFile(
        file,
        text.replace(CDN_URL_IN_TEXT, (url) => replacements.get(url) ?? url),
      );
    }
  }
  return staged;
}

/**
 * Writes an npm file svc answers a CDN URL with under `vendor/npm/<package>@<version>/<path>`, and
 * the modules it imports (three.module.js imports ./three.core.js; an esm.sh module imports other
 * packages by esm.sh URL, pointed here at their staged copies), as the CDN would serve them.
 * Returns its path under vendor/.
 */
async function stageNpmFile(
  url: string,
  vendor: string,
  staged = new Map<string, Promise<string | undefined>>(),
): Promise<string | undefined> {
  let done = staged.get(url);
  if (!done) {
    done = (async () => {
      const answer = await cdnAnswer(url).catch(() => undefined);
      const library = answer?.library;
      if (!answer?.file || !library) return undefined;
      const base = `${library.packageName.replace("/", "+")}@${library.version}`;
      const at = `npm/${base}/${library.path}`;
      let body = answer.file.body;
      if (/\.m?js$/.test(library.path)) {
        const fileUrl = `https://cdn.jsdelivr.net/npm/${library.packageName}@${library.version}/${library.path}`;
        let text = body.toString("utf8");
        const imports =
          /((?:\bfrom|\bimport)\s*\(?\s*)(["'])(https:\/\/esm\.sh\/[^"']+|\.\.?\/[^"']+)\2/g;
        const targets = new Map<string, string | undefined>();
        for (const match of text.matchAll(imports)) {
          const target = new URL(match[3]!, fileUrl).href;
          if (!targets.has(match[3]!))
            targets.set(match[3]!, await stageNpmFile(target, vendor, staged));
        }
        text = text.replace(imports, (whole, before: string, quote: string, specifier: string) => {
          const target = targets.get(specifier);
          if (!target) return whole;
          const path = relative(dirname(at), target);
          return `${before}${quote}${path.startsWith(".") ? path : `./${path}`}${quote}`;
        });
        body = Buffer.from(text);
      }
      const to = join(vendor, at);
      await mkdir(dirname(to), { recursive: true });
      await writeFile(to, body);
      return at;
    })();
    staged.set(url, done);
  }
  return done;
}

// ---- rendering ----

interface Command {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

function renderArgs(project: string, output: string, args: CompatArgs): string[] {
  return [
    "render",
    project,
    "-o",
    output,
    "--quality",
    "standard",
    "--fps",
    String(args.fps),
    "--workers",
    String(args.workers),
  ];
}

function svcCommand(project: string, output: string, args: CompatArgs): Command {
  return {
    command: process.execPath,
    args: [join(args.svcRoot ?? ROOT, "bin", "svc.js"), ...renderArgs(project, output, args)],
    env: process.env,
  };
}

function referenceCommand(project: string, output: string, args: CompatArgs): Command {
  return {
    command: NODE22,
    args: [HYPERFRAMES, ...renderArgs(project, output, args)],
    env: {
      ...process.env,
      ...REFERENCE_ENV,
      // The reference stops a render when any process above it exits (a shell that started the
      // bench in the background, say); the bench stops its renders itself, by process group.
      HYPERFRAMES_RENDER_DETACHED: "1",
    },
  };
}

/** GNU time, which reports the CPU of a command and of every process it waited for. */
const GNU_TIME = "/usr/bin/time";

/** `%U %S` as GNU time writes them: user and system seconds, summed. */
export function parseCpuSeconds(text: string): number | undefined {
  const match = /(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s*$/.exec(text.trim());
  return match ? Number(match[1]) + Number(match[2]) : undefined;
}

/** Runs a render in its own process group, stopped (the whole group) after the timeout. */
async function renderSide(spec: Command, output: string): Promise<SideResult> {
  await rm(output, { force: true });
  const cpuFile = `${output}.cpu`;
  const timed = existsSync(GNU_TIME);
  const command = timed ? GNU_TIME : spec.command;
  const commandArgs = timed
    ? ["-f", "%U %S", "-o", cpuFile, spec.command, ...spec.args]
    : spec.args;
  const started = performance.now();
  const child = spawn(command, commandArgs, {
    env: spec.env,
    stdio: ["ignore", "ignore", "pipe"],
    detached: true,
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // gone already
    }
  }, RENDER_TIMEOUT_MS);
  const exitCode = await new Promise<number | null>((done) => {
    child.once("exit", (code) => done(code));
    child.once("error", () => done(null));
  });
  clearTimeout(timer);
  const wallSeconds = (performance.now() - started) / 1000;
  const cpuSeconds = timed
    ? parseCpuSeconds(await readFile(cpuFile, "utf8").catch(() => ""))
    : undefined;
  const ok = exitCode === 0 && existsSync(output);
  let frames = 0;
  if (ok) {
    const info = await probeMedia(output, { countFrames: true }).catch(() => undefined);
    frames = info?.streams.find((s) => s.type === "video")?.frames ?? 0;
  }
  return {
    exitCode,
    error: ok
      ? undefined
      : timedOut
        ? `stopped after ${RENDER_TIMEOUT_MS / 60_000} min`
        : (errorLines(stderr) ?? (exitCode === 0 ? "no output file" : undefined)),
    wallSeconds,
    ...(cpuSeconds !== undefined ? { cpuSeconds } : {}),
    frames,
  };
}

// ---- comparing ----

async function greyFrames(ffmpeg: string, video: string): Promise<Uint8Array[]> {
  const { stdout } = await execFileAsync(
    ffmpeg,
    [
      "-v",
      "error",
      "-i",
      video,
      "-vf",
      `scale=${DIFF_WIDTH}:${DIFF_HEIGHT}:flags=area,format=gray`,
      "-f",
      "rawvideo",
      "-",
    ],
    { encoding: "buffer", maxBuffer: 1024 * 1024 * 1024 },
  );
  return splitFrames(new Uint8Array(stdout), DIFF_WIDTH * DIFF_HEIGHT);
}

async function ssimPerFrame(
  ffmpeg: string,
  a: string,
  b: string,
  workDir: string,
): Promise<number[]> {
  const stats = join(workDir, "ssim-stats.log");
  const byIndex = "settb=1/30,setpts=N";
  // Both scaled to the first one's size, so a render at another size still compares.
  const graph = `[0:v]${byIndex}[a];[1:v]${byIndex}[b0];[b0][a]scale2ref[b][a2];[a2][b]ssim=stats_file=${stats}:shortest=1`;
  await execFileAsync(
    ffmpeg,
    ["-v", "error", "-i", a, "-i", b, "-lavfi", graph, "-f", "null", "-"],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return parseSsimStats(await readFile(stats, "utf8"));
}

async function sideBySide(ffmpeg: string, a: string, b: string, frame: number, png: string) {
  const pick = `select=eq(n\\,${frame}),scale=-2:540`;
  await mkdir(dirname(png), { recursive: true });
  await execFileAsync(ffmpeg, [
    "-v",
    "error",
    "-y",
    "-i",
    a,
    "-i",
    b,
    "-filter_complex",
    `[0:v]${pick}[a];[1:v]${pick}[b];[a][b]hstack=inputs=2`,
    "-frames:v",
    "1",
    png,
  ]);
}

async function compare(row: CompatRow, svcOut: string, refOut: string, workDir: string) {
  const ffmpeg = (await resolveFfmpeg()).path;
  const ssim = await ssimPerFrame(ffmpeg, svcOut, refOut, workDir);
  const [greySvc, greyRef] = await Promise.all([
    greyFrames(ffmpeg, svcOut),
    greyFrames(ffmpeg, refOut),
  ]);
  const pairs = pairFrames(greySvc.length, greyRef.length);
  const diff = pairs.map((n) => visibleDiffShare(greySvc[n]!, greyRef[n]!));
  const paired = ssim.slice(0, pairs.length);
  if (!paired.length) return;
  row.ssimMean = paired.reduce((sum, value) => sum + value, 0) / paired.length;
  row.ssimMin = Math.min(...paired);
  row.ssimWorstFrame = paired.indexOf(row.ssimMin);
  row.diffMax = Math.max(0, ...diff);
  row.diffWorstFrame = diff.indexOf(row.diffMax);
  row.passes = row.ssimMean >= SSIM_MEAN_BAR && row.diffMax <= DIFF_SHARE_BAR;
  const worst = worstFrame(paired, diff);
  row.png = join(RESULTS, `${row.name}.png`);
  await sideBySide(ffmpeg, svcOut, refOut, worst, row.png);
}

function formatSide(side: SideResult): string {
  return side.exitCode === 0 && !side.error
    ? `ok ${side.wallSeconds.toFixed(0)} s ${side.frames} fr`
    : `exit ${side.exitCode ?? "signal"}: ${side.error ?? ""}`;
}

function formatRow(row: CompatRow): string {
  const metrics =
    row.ssimMean !== undefined
      ? [
          `ssim mean ${row.ssimMean.toFixed(4)} min ${row.ssimMin!.toFixed(4)} @${row.ssimWorstFrame}`,
          `diff max ${(row.diffMax! * 100).toFixed(2)}% @${row.diffWorstFrame}`,
          `wall svc/ref ${row.wallRatio!.toFixed(2)}`,
          ...(row.cpuRatio !== undefined ? [`cpu svc/ref ${row.cpuRatio.toFixed(2)}`] : []),
          row.passes
            ? "PASS"
            : row.exception
              ? `below bar: documented exception (${row.exception})`
              : "below bar",
        ]
      : ["not compared"];
  return [
    row.name.padEnd(28),
    `svc ${formatSide(row.svc)}`,
    `ref ${formatSide(row.reference)}`,
    ...metrics,
  ].join(" | ");
}

/** The summary line: how many reach the bar, of how many the reference renders, median wall ratio. */
export function summaryLine(rows: CompatRow[]): string {
  const refOk = rows.filter((row) => row.reference.exitCode === 0 && !row.reference.error);
  const svcOkOfThose = refOk.filter((row) => row.svc.exitCode === 0 && !row.svc.error);
  const passing = rows.filter((row) => row.passes);
  const excepted = rows.filter((row) => row.passes === false && row.exception);
  const ratio = median(rows.flatMap((row) => (row.wallRatio !== undefined ? [row.wallRatio] : [])));
  const cpu = median(rows.flatMap((row) => (row.cpuRatio !== undefined ? [row.cpuRatio] : [])));
  return (
    `${passing.length}/${refOk.length} of the compositions the reference renders reach SSIM mean >= ${SSIM_MEAN_BAR} and max diff <= ${DIFF_SHARE_BAR * 100}%; ` +
    (excepted.length
      ? `${excepted.length} below it with a documented exception (bench/README.md: ${excepted.map((row) => row.name).join(", ")}); `
      : "") +
    `svc renders ${svcOkOfThose.length}/${refOk.length} of them; ${rows.length - refOk.length} the reference fails; ` +
    `median wall ratio svc/reference ${ratio === undefined ? "n/a" : ratio.toFixed(2)}` +
    (cpu === undefined ? "" : `; median CPU ratio ${cpu.toFixed(2)}`)
  );
}

export async function runCompat(args: CompatArgs): Promise<CompatRow[]> {
  if (!existsSync(HYPERFRAMES) || !existsSync(NODE22)) {
    throw new Error(
      "The reference renderer is not installed: run `bash bench/reference/setup.sh`.",
    );
  }
  const corpusFile = args.corpusDir ? join(resolve(args.corpusDir), "corpus.json") : CORPUS;
  const corpus = existsSync(corpusFile)
    ? (JSON.parse(await readFile(corpusFile, "utf8")) as { items: CorpusItem[] })
    : { items: await featureItems(dirname(corpusFile)) };
  const byName = new Map(corpus.items.map((item) => [item.name, item]));
  const names = args.only ? args.only.split(",") : corpus.items.map((item) => item.name);
  for (const name of names) {
    if (!byName.has(name)) throw new Error(`No composition ${name} in ${corpusFile}`);
  }
  // svc builds its CLI bundle on its first start after a source change: not a render's time.
  await execFileAsync(process.execPath, [join(args.svcRoot ?? ROOT, "bin", "svc.js"), "--version"]);
  await mkdir(RESULTS, { recursive: true });
  const workDir = await mkdtemp(join(tmpdir(), "svc-compat-"));
  const mediaCache = join(workDir, "stand-in-media");
  const rows: CompatRow[] = [];
  console.log(
    `compat: ${names.length} compositions, svc${args.svcRoot ? ` (from ${args.svcRoot})` : ""} vs reference (hyperframes), ${args.fps} fps standard, ${args.workers} workers each (load average ${loadavg()[0]!.toFixed(1)}); side by side: svc left, reference right, in ${relative(ROOT, RESULTS)}/`,
  );
  try {
    for (const name of names) {
      const item = byName.get(name)!;
      const source = resolve(dirname(corpusFile), item.project);
      const dir = join(workDir, name);
      await mkdir(dir, { recursive: true });
      const svcProject = join(dir, "svc");
      const refProject = join(dir, "reference");
      await stageProject(source, svcProject, { forReference: false, vendorDir: args.vendorDir });
      await stageProject(source, refProject, { forReference: true, vendorDir: args.vendorDir });
      for (const [path, kind] of Object.entries(item.media ?? {})) {
        const file = await standInMedia(kind, mediaCache);
        for (const project of [svcProject, refProject]) {
          const target = resolve(project, path);
          if (!target.startsWith(project + sep))
            throw new Error(`${name}: media path ${path} leaves the project`);
          await mkdir(dirname(target), { recursive: true });
          await copyFile(file, target);
        }
      }
      const svcOut = join(dir, `${name}-svc.mp4`);
      const refOut = join(dir, `${name}-reference.mp4`);
      const svc = await renderSide(svcCommand(svcProject, svcOut, args), svcOut);
      const reference = await renderSide(referenceCommand(refProject, refOut, args), refOut);
      const row: CompatRow = { name, svc, reference };
      if (item.exception) row.exception = item.exception;
      if (!svc.error && !reference.error) {
        row.wallRatio = svc.wallSeconds / reference.wallSeconds;
        if (svc.cpuSeconds !== undefined && reference.cpuSeconds) {
          row.cpuRatio = svc.cpuSeconds / reference.cpuSeconds;
        }
        await compare(row, svcOut, refOut, dir).catch((error: Error) => {
          row.svc.error = `compare failed: ${error.message.slice(0, 300)}`;
        });
      }
      if (args.keepDir) {
        await mkdir(args.keepDir, { recursive: true });
        for (const out of [svcOut, refOut]) {
          if (existsSync(out)) await copyFile(out, join(args.keepDir, basename(out)));
        }
      }
      rows.push(row);
      console.log(formatRow(row));
      await writeFile(join(RESULTS, "results.json"), JSON.stringify(rows, null, 2));
      await rm(dir, { recursive: true, force: true });
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
  console.log(summaryLine(rows));
  return rows;
}
