// What the Project screen derives from the creator's choices, without React: which render options
// are allowed (the shared schema decides, so "4k cannot be webm" is written once), the estimated
// credits, and the equivalent `svc cloud render` command line.
import { creditsFor, outputCredits } from "../shared/credits";
import {
  ASPECT_RATIOS,
  checkRenderOptions,
  FORMATS,
  RESOLUTIONS,
  type AspectRatio,
  type OutputFormat,
  type Resolution,
} from "../shared/render-options";
import type { VariableValues } from "../shared/variables";
import { FPS_MAX, FPS_MIN } from "../shared/limits";
import { queuedRenderSettingsSchema, type QueuedRenderSettings } from "../shared/ipc";
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

/** What the render options depend on in the composition: its own size and its length. */
export interface CompositionFacts {
  /** The aspect ratio the composition is made at (undefined: none of the three). */
  aspectRatio: AspectRatio | undefined;
  duration: number | undefined;
}

/** The API's `outputs` as a queued render's settings carry them. */
export type PlannedOutputs = NonNullable<QueuedRenderSettings["outputs"]>;

/** Words for each size, as the Sizes checkboxes say them. */
export const SIZE_LABELS: Record<AspectRatio, string> = {
  "16:9": "16:9 landscape",
  "9:16": "9:16 portrait",
  "1:1": "1:1 square",
};

/**
 * The sizes to render, the main one first: the composition's own size when it is ticked (the file
 * the others are named after), then the others in the order of the checkboxes.
 */
export function tickedSizes(render: RenderChoices, made: AspectRatio | undefined): AspectRatio[] {
  const chosen = render.sizes.length > 0 ? render.sizes : [render.aspectRatio ?? made ?? "16:9"];
  const main =
    made && chosen.includes(made) ? made : ASPECT_RATIOS.find((r) => chosen.includes(r))!;
  return [main, ...ASPECT_RATIOS.filter((ratio) => ratio !== main && chosen.includes(ratio))];
}

/** The poster's time: the one typed, else the middle of the video (to a tenth of a second). */
export function posterTimeOf(render: RenderChoices, duration: number | undefined): number {
  return render.posterTime ?? (duration ? Math.round(duration * 5) / 10 : 0);
}

/**
 * The API's `outputs` for the ticked sizes and extras (a video per size, then a GIF and a poster at
 * the main size), or undefined when the render is one file at the composition's own size.
 */
export function outputsOf(
  render: RenderChoices,
  facts: CompositionFacts,
): PlannedOutputs | undefined {
  const sizes = tickedSizes(render, facts.aspectRatio);
  const gif = render.gif && render.format !== "gif";
  if (sizes.length === 1 && sizes[0] === facts.aspectRatio && !gif && !render.poster)
    return undefined;
  const main = sizes[0]!;
  return [
    ...sizes.map((ratio) => ({ aspect_ratio: ratio })),
    ...(gif ? [{ format: "gif" as const, aspect_ratio: main }] : []),
    ...(render.poster
      ? [
          {
            still: { time: posterTimeOf(render, facts.duration), format: "png" as const },
            aspect_ratio: main,
          },
        ]
      : []),
  ];
}

/** The first problem with the render options as a whole (e.g. fps out of range, a late poster). */
export function renderOptionsProblem(
  render: RenderChoices,
  facts?: CompositionFacts,
): string | undefined {
  const result = checkRenderOptions(render);
  if (!result.ok) return result.problem.message;
  if (!facts) return undefined;
  if (render.poster) {
    const time = posterTimeOf(render, facts.duration);
    if (!Number.isFinite(time) || time < 0) return "Type the poster's time in seconds, e.g. 1.5.";
    if (facts.duration !== undefined && time >= facts.duration)
      return `The poster's time must be before the end of the video (${facts.duration} s): type a smaller number of seconds.`;
  }
  const checked = queuedRenderSettingsSchema.safeParse(queuedRenderSettingsFrom(render, facts));
  if (checked.success) return undefined;
  const issue = checked.error.issues[0]!;
  // The rule names the API's fields (outputs[1]); the panel says which file.
  return issue.path[0] === "outputs" && render.gif && /fps/.test(issue.message)
    ? `The GIF ${issue.message.replace(/^a gif /, "")}`
    : issue.message;
}

/**
 * The credits the service will charge for these files: each output's charge line (the service's
 * own rule, outputCredits -> creditsFor), added up.
 */
export function plannedCredits(render: RenderChoices, facts: CompositionFacts): number | undefined {
  const duration = facts.duration;
  if (duration === undefined) return undefined;
  const outputs = outputsOf(render, facts) ?? [{}];
  return outputs.reduce(
    (sum, output) =>
      sum +
      outputCredits(
        {
          kind: output.still ? "still" : "video",
          resolution: output.resolution ?? render.resolution,
        },
        duration,
        render.fps,
      ),
    0,
  );
}

/** "3 videos, a GIF and a poster picture": what one Render makes, in words. */
export function filesSummary(render: RenderChoices, facts: CompositionFacts): string {
  const outputs = outputsOf(render, facts) ?? [{}];
  const videos = outputs.filter((o) => !o.still && o.format === undefined).length;
  const parts = [videos === 1 ? "1 video" : `${videos} videos`];
  if (outputs.some((o) => o.format === "gif")) parts.push("a GIF");
  if (outputs.some((o) => o.still)) parts.push("a poster picture");
  const last = parts.pop()!;
  return parts.length > 0 ? `${parts.join(", ")} and ${last}` : last;
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
  facts: CompositionFacts;
  values: VariableValues;
  strictVariables: boolean;
}): string {
  const { render, facts } = input;
  const words = ["svc", "cloud", "render", input.dir];
  if (input.composition !== "index.html") words.push("--composition", input.composition);
  words.push("--fps", String(render.fps), "--quality", render.quality);
  words.push("--format", render.format, "--resolution", render.resolution);
  const outputs = outputsOf(render, facts);
  const main = outputs?.[0]?.aspect_ratio ?? render.aspectRatio;
  if (main && main !== facts.aspectRatio) words.push("--aspect-ratio", main);
  const also = (outputs ?? [])
    .slice(1)
    .map((output) =>
      output.still
        ? `still@${output.still.time}`
        : output.format !== undefined
          ? output.format
          : output.aspect_ratio!,
    );
  if (also.length > 0) words.push("--also", also.join(","));
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
 * A queued render's title: the project, and its title variable when it has a text one ("lower-third
 * · Grace Hopper"). The output file is named from it and the date (main/queued-render-steps.ts).
 */
export function queuedRenderTitle(project: string, values: Record<string, unknown>): string {
  const title = ["title", "name", "headline"]
    .map((id) => values[id])
    .find((value): value is string => typeof value === "string" && value.trim() !== "");
  return title ? `${project} · ${title.trim().slice(0, 80)}` : project;
}

/**
 * The Project screen's render options as a queued render's settings: one file at the composition's
 * size (detected), or the ticked sizes and extras as `outputs`.
 */
export function queuedRenderSettingsFrom(
  render: RenderChoices,
  facts: CompositionFacts,
): QueuedRenderSettings {
  const outputs = outputsOf(render, facts);
  return {
    fps: render.fps,
    quality: render.quality,
    format: render.format,
    resolution: render.resolution,
    ...(!outputs && render.aspectRatio ? { aspectRatio: render.aspectRatio } : {}),
    ...(outputs ? { outputs } : {}),
  };
}

/** "mp4 · 1080p · 30 fps": a queued render's or batch's output at a glance. */
export function settingsSummary(
  settings: Pick<QueuedRenderSettings, "format" | "resolution" | "fps">,
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
