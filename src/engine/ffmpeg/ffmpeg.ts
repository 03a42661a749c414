// Finds the FFmpeg and ffprobe executables the engine encodes and inspects videos with, and reads
// what a given build can do. The SVC_FFMPEG_PATH / SVC_FFPROBE_PATH variable comes first; a set
// variable that points nowhere is an error rather than a silent fallback, since the user asked
// for that binary on purpose. Then, for ffmpeg, the static build shipped in the
// @ffmpeg-installer/ffmpeg npm package when it has every encoder the formats need, because it is
// the faster one: a render starts one FFmpeg per segment, and a distribution's shared build loads
// a couple of hundred libraries each time (~0.3 s of CPU here, against ~10 ms), and the static
// x264 measured no slower per frame (bench/README.md). Then the tool on PATH, then (ffprobe) the
// @ffprobe-installer/ffprobe build, so `npm install` alone gives a working engine.
import { execFile } from "node:child_process";
import { constants, existsSync } from "node:fs";
import { access } from "node:fs/promises";
import { createRequire } from "node:module";
import { delimiter, join } from "node:path";
import { EngineError } from "../errors";

export type ToolSource = "env" | "path" | "bundled";

export interface ResolvedTool {
  path: string;
  source: ToolSource;
  /** Why this build, in a sentence `svc doctor` shows. */
  reason: string;
}

export interface FfmpegInfo {
  /** The build's own version string, e.g. "6.1.1-3ubuntu5" or "N-47683-g0e8eb07980-static". */
  version: string;
  /** Encoder names as listed by `-encoders`, e.g. "libx264", "prores_ks", "aac". */
  encoders: string[];
}

/** Encoders the output formats of SPEC.md section 3 need (mp4, webm, mov). */
export const REQUIRED_ENCODERS = ["libx264", "libvpx-vp9", "prores_ks", "aac", "libopus"] as const;

interface ToolSpec {
  name: "ffmpeg" | "ffprobe";
  envVar: "SVC_FFMPEG_PATH" | "SVC_FFPROBE_PATH";
  packageName: string;
  /** Take the bundled build before the one on PATH, when it can do everything needed. */
  preferBundled: boolean;
}

const FFMPEG: ToolSpec = {
  name: "ffmpeg",
  envVar: "SVC_FFMPEG_PATH",
  packageName: "@ffmpeg-installer/ffmpeg",
  preferBundled: true,
};
const FFPROBE: ToolSpec = {
  name: "ffprobe",
  envVar: "SVC_FFPROBE_PATH",
  packageName: "@ffprobe-installer/ffprobe",
  preferBundled: false,
};

const BUNDLED_IS_FASTER =
  "the static build that ships with svc: it starts in milliseconds where a shared build loads hundreds of libraries for every segment, and encodes no slower";

export function resolveFfmpeg(env: NodeJS.ProcessEnv = process.env): Promise<ResolvedTool> {
  return resolveTool(FFMPEG, env);
}

const MEDIA_FFMPEG: ToolSpec = { ...FFMPEG, preferBundled: false };

/**
 * The FFmpeg that decodes customers' audio and video (the mix of a render's audio): a maintained
 * release, SVC_FFMPEG_PATH or the one on PATH (Debian's, kept up to date by the system), before
 * the 2018 static build, which lacks seven years of security fixes. svc's own frames keep
 * resolveFfmpeg's fast-starting build: their bytes are ours.
 */
export async function resolveMediaFfmpeg(
  env: NodeJS.ProcessEnv = process.env,
): Promise<ResolvedTool> {
  const found = await resolveTool(MEDIA_FFMPEG, env);
  return found.source === "path"
    ? { ...found, reason: "found on PATH: a maintained FFmpeg decodes customers' media" }
    : found;
}

export function resolveFfprobe(env: NodeJS.ProcessEnv = process.env): Promise<ResolvedTool> {
  return resolveTool(FFPROBE, env);
}

async function resolveTool(spec: ToolSpec, env: NodeJS.ProcessEnv): Promise<ResolvedTool> {
  const fromEnv = env[spec.envVar]?.trim();
  if (fromEnv) {
    if (!(await isExecutable(fromEnv))) {
      throw new EngineError(
        "ffmpeg_not_found",
        `${spec.envVar} points to ${fromEnv}, which is not an executable file.`,
        `Fix the path in ${spec.envVar}, or unset it to use ${spec.name} from PATH or the copy that ships with svc.`,
      );
    }
    return { path: fromEnv, source: "env", reason: `${spec.envVar} is set` };
  }
  const bundled = bundledPath(spec.packageName);
  const bundledRuns = bundled !== undefined && (await isExecutable(bundled));
  let bundledLacks: string[] = [];
  if (spec.preferBundled && bundled && bundledRuns) {
    const encoders = await ffmpegInfo(bundled).then(
      (info) => info.encoders,
      () => [] as string[],
    );
    bundledLacks = REQUIRED_ENCODERS.filter((name) => !encoders.includes(name));
    if (bundledLacks.length === 0) {
      return { path: bundled, source: "bundled", reason: BUNDLED_IS_FASTER };
    }
  }
  const onPath = await findOnPath(spec.name, env);
  if (onPath) {
    const reason = !spec.preferBundled
      ? "found on PATH"
      : bundledRuns
        ? `found on PATH; the bundled build lacks ${bundledLacks.join(", ") || "a working encoder list"}`
        : "found on PATH; there is no bundled build for this platform";
    return { path: onPath, source: "path", reason };
  }
  if (bundled && bundledRuns) {
    return {
      path: bundled,
      source: "bundled",
      reason: spec.preferBundled
        ? `the build that ships with svc (none on PATH), though it lacks ${bundledLacks.join(", ")}`
        : `the build that ships with svc (none on PATH)`,
    };
  }
  throw new EngineError(
    "ffmpeg_not_found",
    `${spec.name} was not found: ${spec.envVar} is unset, it is not on PATH, and the ${spec.packageName} package has no build for this platform.`,
    `Install FFmpeg (apt-get install ffmpeg, brew install ffmpeg) or set ${spec.envVar} to a ${spec.name} executable.`,
  );
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, process.platform === "win32" ? constants.F_OK : constants.X_OK);
    return existsSync(file);
  } catch {
    return false;
  }
}

async function findOnPath(name: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const dirs = (env.PATH ?? env.Path ?? "").split(delimiter).filter(Boolean);
  const names = process.platform === "win32" ? [`${name}.exe`, name] : [name];
  for (const dir of dirs) {
    for (const candidate of names) {
      const file = join(dir, candidate);
      if (await isExecutable(file)) return file;
    }
  }
  return undefined;
}

function bundledPath(packageName: string): string | undefined {
  try {
    // Both installer packages are CommonJS and throw when the platform has no build.
    const require = createRequire(import.meta.url);
    const installer = require(packageName) as { path?: unknown };
    return typeof installer.path === "string" ? installer.path : undefined;
  } catch {
    return undefined;
  }
}

const infoCache = new Map<string, Promise<FfmpegInfo>>();

/** Version and encoder list of an ffmpeg (or ffprobe) build; asked once per path per process. */
export function ffmpegInfo(path: string): Promise<FfmpegInfo> {
  let cached = infoCache.get(path);
  if (!cached) {
    cached = readInfo(path);
    cached.catch(() => infoCache.delete(path));
    infoCache.set(path, cached);
  }
  return cached;
}

async function readInfo(path: string): Promise<FfmpegInfo> {
  const [versionText, encodersText] = await Promise.all([
    runText(path, ["-hide_banner", "-version"]),
    runText(path, ["-hide_banner", "-encoders"]),
  ]);
  return { version: parseVersion(versionText), encoders: parseEncoders(encodersText) };
}

function runText(path: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(path, args, { maxBuffer: 16 * 1024 * 1024, timeout: 30_000 }, (error, stdout) => {
      if (error) {
        reject(
          new EngineError(
            "ffmpeg_not_found",
            `${path} ${args.join(" ")} failed: ${error.message.split("\n")[0]}`,
            "Check that the file is a working FFmpeg build, or set SVC_FFMPEG_PATH / SVC_FFPROBE_PATH.",
          ),
        );
      } else {
        resolve(stdout);
      }
    });
  });
}

/** "ffmpeg version 6.1.1-3ubuntu5 Copyright ..." -> "6.1.1-3ubuntu5". */
export function parseVersion(text: string): string {
  const match = /\b(?:ffmpeg|ffprobe) version (\S+)/.exec(text);
  return match?.[1] ?? "unknown";
}

/** Encoder lines look like " V..... libx264   libx264 H.264 ..."; the header ends at "------". */
export function parseEncoders(text: string): string[] {
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((line) => line.trim().startsWith("------"));
  const encoders: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const match = /^\s*[VAS][A-Z.]{5}\s+(\S+)/.exec(line);
    if (match?.[1]) encoders.push(match[1]);
  }
  return encoders;
}
