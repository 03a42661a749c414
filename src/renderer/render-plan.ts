// What the Project screen derives from the creator's choices, without React: which render options
// are allowed (the shared schema decides, so "4k cannot be webm" is written once), the estimated
// credits, and the equivalent `svc cloud render` command line.
import { creditsFor } from "../shared/credits";
import {
  checkRenderOptions,
  FORMATS,
  RESOLUTIONS,
  type OutputFormat,
  type Resolution,
} from "../shared/render-options";
import type { VariableValues } from "../shared/variables";
import { FPS_MAX, FPS_MIN } from "../shared/limits";
import type { JobRenderSettings } from "../shared/ipc";
import type { RenderChoices } from "./store";

/** Why `format` cannot be chosen with `resolution`, or undefined when it can. */
export function formatBlockedReason(
  format: OutputFormat,
  resolution: Resolution,
): string | undefined {
  const result = checkRenderOptions({ format, resolution });
  return result.ok ? undefined : result.problem.message;
}

export function blockedFormats(resolution: Resolution): Map<OutputFormat, string> {
  const blocked = new Map<OutputFormat, string>();
  for (const format of FORMATS) {
    const reason = formatBlockedReason(format, resolution);
    if (reason) blocked.set(format, reason);
  }
  return blocked;
}

export function blockedResolutions(format: OutputFormat): Map<Resolution, string> {
  const blocked = new Map<Resolution, string>();
  for (const resolution of RESOLUTIONS) {
    const reason = formatBlockedReason(format, resolution);
    if (reason) blocked.set(resolution, reason);
  }
  return blocked;
}

/** The first problem with the render options as a whole (e.g. fps out of range). */
export function renderOptionsProblem(render: RenderChoices): string | undefined {
  const result = checkRenderOptions(render);
  return result.ok ? undefined : result.problem.message;
}

/** Credits the service will charge when the render completes (the service's own rule). */
export function estimatedCredits(
  durationSeconds: number | undefined,
  resolution: Resolution,
): number | undefined {
  return durationSeconds === undefined ? undefined : creditsFor(durationSeconds, resolution);
}

function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `svc cloud render` with the same project, composition, options and changed variables. */
export function cliCommand(input: {
  dir: string;
  composition: string;
  render: RenderChoices;
  values: VariableValues;
  strictVariables: boolean;
}): string {
  const { render } = input;
  const words = ["svc", "cloud", "render", input.dir];
  if (input.composition !== "index.html") words.push("--composition", input.composition);
  words.push("--fps", String(render.fps), "--quality", render.quality);
  words.push("--format", render.format, "--resolution", render.resolution);
  if (render.aspectRatio) words.push("--aspect-ratio", render.aspectRatio);
  if (Object.keys(input.values).length > 0) words.push("--variables", JSON.stringify(input.values));
  if (input.strictVariables) words.push("--strict-variables");
  return words.map(shellQuote).join(" ");
}

export function formatSeconds(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  const minutes = Math.floor(whole / 60);
  return `${minutes}:${String(whole % 60).padStart(2, "0")}`;
}

/** A `.svcignore` line that would leave out `path` (its folder when it sits in one). */
export function suggestedIgnoreLine(path: string): string {
  const slash = path.indexOf("/");
  return slash > 0 ? `${path.slice(0, slash)}/` : path;
}

/** "1 credit", "4 credits". */
export function countOf(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** The last part of a folder path ("lower-third" for /x/examples/lower-third/). */
export function folderName(dir: string): string {
  return (
    dir
      .replace(/[\\/]+$/, "")
      .split(/[\\/]/)
      .pop() || dir
  );
}

/**
 * A job's title: the project, and its title variable when it has a text one ("lower-third · Grace
 * Hopper"). The output file is named from it and the date (main/job-steps.ts).
 */
export function jobTitle(project: string, values: Record<string, unknown>): string {
  const title = ["title", "name", "headline"]
    .map((id) => values[id])
    .find((value): value is string => typeof value === "string" && value.trim() !== "");
  return title ? `${project} · ${title.trim().slice(0, 80)}` : project;
}

/** The Project screen's render options as a job's settings (no aspect ratio: detected). */
export function jobSettingsFrom(render: RenderChoices): JobRenderSettings {
  return {
    fps: render.fps,
    quality: render.quality,
    format: render.format,
    resolution: render.resolution,
    ...(render.aspectRatio ? { aspectRatio: render.aspectRatio } : {}),
  };
}

/** "mp4 · 1080p · 30 fps": a job's or batch's output at a glance. */
export function settingsSummary(
  settings: Pick<JobRenderSettings, "format" | "resolution" | "fps">,
): string {
  return `${settings.format} · ${settings.resolution} · ${settings.fps} fps`;
}

/** The rates offered in the frames-per-second list. */
export const COMMON_FPS = [24, 25, 30, 50, 60] as const;

/** The fps typed, as a number, or why it is refused. */
export function parseFps(text: string): { fps: number } | { problem: string } {
  const trimmed = text.trim();
  const range = `a whole number from ${FPS_MIN} to ${FPS_MAX}, e.g. ${COMMON_FPS.join(", ")}`;
  if (trimmed === "") return { problem: `Type the frames per second: ${range}.` };
  if (!/^\d+$/.test(trimmed))
    return { problem: `“${trimmed}” is not a number of frames per second: type ${range}.` };
  const fps = Number(trimmed);
  if (fps < FPS_MIN || fps > FPS_MAX)
    return { problem: `${fps} frames per second is out of range: type ${range}.` };
  return { fps };
}
