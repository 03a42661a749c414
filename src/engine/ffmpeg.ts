// Finds the FFmpeg and ffprobe executables the engine encodes and inspects videos with, and reads
// what a given build can do. Order (SPEC.md section 3): the SVC_FFMPEG_PATH / SVC_FFPROBE_PATH
// variable, then the tool on PATH, then the static build shipped in the @ffmpeg-installer/ffmpeg
// and @ffprobe-installer/ffprobe npm packages, so `npm install` alone gives a working engine.
// A set variable that points nowhere is an error rather than a silent fallback: the user asked
// for that binary on purpose.
import { execFile } from "node:child_process";
import { constants, existsSync } from "node:fs";
import { access } from "node:fs/promises";
import { createRequire } from "node:module";
import { delimiter, join } from "node:path";
import { EngineError } from "./errors";

export type ToolSource = "env" | "path" | "bundled";

export interface ResolvedTool {
  path: string;
  source: ToolSource;
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
}

const FFMPEG: ToolSpec = {
  name: "ffmpeg",
  envVar: "SVC_FFMPEG_PATH",
  packageName: "@ffmpeg-installer/ffmpeg",
};
const FFPROBE: ToolSpec = {
  name: "ffprobe",
  envVar: "SVC_FFPROBE_PATH",
  packageName: "@ffprobe-installer/ffprobe",
};

export function resolveFfmpeg(env: NodeJS.ProcessEnv = process.env): Promise<ResolvedTool> {
  return resolveTool(FFMPEG, env);
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
    return { path: fromEnv, source: "env" };
  }
  const onPath = await findOnPath(spec.name, env);
  if (onPath) return { path: onPath, source: "path" };
  const bundled = bundledPath(spec.packageName);
  if (bundled && (await isExecutable(bundled))) return { path: bundled, source: "bundled" };
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
