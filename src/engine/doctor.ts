// Checks that this computer can render: which browser and FFmpeg the engine would use, their
// versions, whether FFmpeg has every encoder the output formats need, and for anything missing
// what to install. One report backs both `svc doctor` outputs (human and --json).
import { execFile } from "node:child_process";
import { resolveChromium } from "./browser/browser";
import { confinementFor } from "./browser/confinement";
import type { BrowserSource } from "./browser/browser";
import { isEngineError } from "./errors";
import {
  ffmpegInfo,
  REQUIRED_ENCODERS,
  resolveFfmpeg,
  resolveFfprobe,
  resolveMediaFfmpeg,
} from "./ffmpeg/ffmpeg";
import type { ToolSource } from "./ffmpeg/ffmpeg";

export type RequiredEncoder = (typeof REQUIRED_ENCODERS)[number];

/** What each needed encoder is for, in the product's words. */
export const ENCODER_PURPOSE: Record<RequiredEncoder, string> = {
  libx264: "H.264 video for mp4",
  "libvpx-vp9": "VP9 video with alpha for webm",
  prores_ks: "ProRes 4444 with alpha for mov",
  aac: "AAC audio for mp4 and mov",
  libopus: "Opus audio for webm",
};

interface Check {
  /** Found and working; `problem` and `hint` say why not. */
  ok: boolean;
  path?: string;
  version?: string;
  /** Why the engine uses this one (and not another it could have found). */
  reason?: string;
  problem?: string;
  hint?: string;
}

export interface BrowserCheck extends Check {
  source?: BrowserSource;
  /** A headless-shell build: supports HeadlessExperimental.beginFrame, the fast exact capture. */
  headlessShell?: boolean;
}

export interface ToolCheck extends Check {
  source?: ToolSource;
}

export interface FfmpegCheck extends ToolCheck {
  encoders: Array<{ name: RequiredEncoder; purpose: string; present: boolean }>;
}

/**
 * How the browser of a page whose network is closed (every service render) is fenced in
 * (confinement.ts): "namespace" is closed by construction, "switches" by the browser's own flags.
 */
export interface ServiceRendersCheck {
  network: "namespace" | "switches";
  sandbox: boolean;
  /** The user id the browser runs as, when not this process's (a root process). */
  uid?: number;
  reason: string;
  sandboxReason: string;
}

export interface DoctorReport {
  /** Everything a render of any format needs is present. */
  ok: boolean;
  browser: BrowserCheck;
  /** Present when a browser was found. */
  serviceRenders?: ServiceRendersCheck;
  ffmpeg: FfmpegCheck;
  ffprobe: ToolCheck;
  /** The FFmpeg that decodes customers' audio and video (a maintained release, where there is one). */
  mediaFfmpeg: ToolCheck;
}

const BROWSER_HINT =
  "Install Chromium (apt-get install chromium-headless-shell for the fastest capture, or chromium), or set SVC_CHROMIUM_PATH to a Chrome/Chromium executable.";
const FFMPEG_HINT =
  "Install FFmpeg (apt-get install ffmpeg), or set SVC_FFMPEG_PATH to an ffmpeg executable.";
const FFPROBE_HINT =
  "Install FFmpeg, which includes ffprobe (apt-get install ffmpeg), or set SVC_FFPROBE_PATH to an ffprobe executable.";

export async function runDoctor(env: NodeJS.ProcessEnv = process.env): Promise<DoctorReport> {
  const [browser, ffmpeg, ffprobe, mediaFfmpeg] = await Promise.all([
    checkBrowser(env),
    checkFfmpeg(env),
    checkFfprobe(env),
    checkTool(() => resolveMediaFfmpeg(env), FFMPEG_HINT).then((check) => check.tool),
  ]);
  const report: DoctorReport = {
    ok: browser.ok && ffmpeg.ok && ffprobe.ok,
    browser,
    mediaFfmpeg,
    ffmpeg,
    ffprobe,
  };
  if (browser.path) report.serviceRenders = serviceRendersCheck(browser.path, env);
  return report;
}

/** How service renders' browsers would start here (also logged when the service starts). */
export function serviceRendersCheck(
  executablePath: string,
  env: NodeJS.ProcessEnv = process.env,
): ServiceRendersCheck {
  const confinement = confinementFor(executablePath, true, env);
  return {
    network: confinement.network === "namespace" ? "namespace" : "switches",
    sandbox: confinement.sandbox,
    ...(confinement.uid !== undefined ? { uid: confinement.uid } : {}),
    reason: confinement.reason,
    sandboxReason: confinement.sandboxReason,
  };
}

async function checkBrowser(env: NodeJS.ProcessEnv): Promise<BrowserCheck> {
  let resolved;
  try {
    resolved = await resolveChromium(env);
  } catch (error) {
    return failed(error, BROWSER_HINT);
  }
  const check: BrowserCheck = {
    ok: true,
    path: resolved.executablePath,
    source: resolved.source,
    headlessShell: resolved.headlessShell,
    reason: resolved.reason,
  };
  try {
    check.version = await browserVersion(resolved.executablePath, {
      ...process.env,
      ...resolved.env,
    });
  } catch (error) {
    return {
      ...check,
      ok: false,
      problem: `${resolved.executablePath} does not run: ${messageOf(error)}`,
      hint: BROWSER_HINT,
    };
  }
  return check;
}

function browserVersion(path: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(path, ["--no-sandbox", "--version"], { env, timeout: 15_000 }, (error, stdout) => {
      if (error) reject(error);
      else resolve(stdout.trim().split("\n")[0] ?? "unknown");
    });
  });
}

async function checkFfmpeg(env: NodeJS.ProcessEnv): Promise<FfmpegCheck> {
  const check = await checkTool(() => resolveFfmpeg(env), FFMPEG_HINT);
  const encoders = check.encoderNames;
  const result: FfmpegCheck = {
    ...check.tool,
    encoders: REQUIRED_ENCODERS.map((name) => ({
      name,
      purpose: ENCODER_PURPOSE[name],
      present: encoders.includes(name),
    })),
  };
  const missing = result.encoders.filter((e) => !e.present).map((e) => e.name);
  if (result.ok && missing.length > 0) {
    result.ok = false;
    result.problem = `This FFmpeg build lacks ${missing.join(", ")}.`;
    result.hint = `Install a full FFmpeg build (apt-get install ffmpeg), or set SVC_FFMPEG_PATH to one with ${missing.join(", ")}.`;
  }
  return result;
}

async function checkFfprobe(env: NodeJS.ProcessEnv): Promise<ToolCheck> {
  return (await checkTool(() => resolveFfprobe(env), FFPROBE_HINT)).tool;
}

async function checkTool(
  resolve: () => Promise<{ path: string; source: ToolSource; reason: string }>,
  hint: string,
): Promise<{ tool: ToolCheck; encoderNames: string[] }> {
  let resolved;
  try {
    resolved = await resolve();
  } catch (error) {
    return { tool: failed(error, hint), encoderNames: [] };
  }
  try {
    const info = await ffmpegInfo(resolved.path);
    return { tool: { ok: true, ...resolved, version: info.version }, encoderNames: info.encoders };
  } catch (error) {
    return {
      tool: { ok: false, ...resolved, problem: messageOf(error), hint },
      encoderNames: [],
    };
  }
}

function failed(error: unknown, fallbackHint: string): Check {
  return {
    ok: false,
    problem: messageOf(error),
    hint: (isEngineError(error) && error.hint) || fallbackHint,
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? (error.message.split("\n")[0] ?? error.message) : String(error);
}
