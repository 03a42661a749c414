// Flags that several commands take, each declared once here with its default (render defaults from
// DEFAULT_RENDER_SETTINGS, the same the app and the service use): the output options, the
// composition and its variables, the wait flags; and their parsers. Bad values are usage errors
// (exit 2) that say the fix.
import { readFileSync } from "node:fs";
import { Option, type Command } from "commander";
import {
  DEFAULT_MAX_WAIT_MINUTES,
  DEFAULT_POLL_INTERVAL_SECONDS,
  FPS_MAX,
  FPS_MIN,
} from "../shared/limits";
import {
  ASPECT_RATIOS,
  DEFAULT_RENDER_SETTINGS,
  FORMATS,
  QUALITIES,
  RESOLUTIONS,
  type OutputFormat,
  type Resolution,
} from "../shared/render-options";
import { UsageError } from "./errors";
import { checkOutputs, MAX_OUTPUTS, parseAlso, type OutputSpec } from "../shared/outputs";

/** --fps, --quality, --format and --resolution, with the same defaults and rules everywhere. */
export function addOutputOptionFlags(command: Command, resolutionNote = ""): Command {
  return command
    .option(
      "--fps <n>",
      `frames per second (${FPS_MIN}-${FPS_MAX})`,
      parseStrictInteger("--fps", FPS_MIN, FPS_MAX),
      DEFAULT_RENDER_SETTINGS.fps,
    )
    .addOption(
      new Option("--quality <tier>", "quality tier (draft: fast preview drawn at 3/4 size)")
        .choices(QUALITIES)
        .default(DEFAULT_RENDER_SETTINGS.quality),
    )
    .addOption(
      new Option(
        "--format <format>",
        "output format (webm, mov and png-sequence keep transparency; gif is at most 50 fps)",
      )
        .choices(FORMATS)
        .default(DEFAULT_RENDER_SETTINGS.format),
    )
    .addOption(
      new Option("--resolution <resolution>", `output resolution${resolutionNote}`)
        .choices(RESOLUTIONS)
        .default(DEFAULT_RENDER_SETTINGS.resolution),
    );
}

/** --aspect-ratio; its default (detected from the composition) is said by `detected`. */
export function addAspectRatioFlag(command: Command, detected: string): Command {
  return command.addOption(
    new Option("--aspect-ratio <ratio>", `aspect ratio (default: ${detected})`).choices(
      ASPECT_RATIOS,
    ),
  );
}

/** -c/--composition: the entry file inside the project folder. */
export function addCompositionFlag(command: Command): Command {
  return command.option(
    "-c, --composition <path>",
    "entry HTML file, relative to the project folder",
    "index.html",
  );
}

/** --variables / --variables-file (read by readVariablesOption), and --strict-variables. */
export function addVariablesFlags(command: Command, strict = true): Command {
  command
    .option("--variables <json>", "variable values as a JSON object")
    .option("--variables-file <file>", "variable values from a JSON file");
  return strict
    ? command.option(
        "--strict-variables",
        "fail when a value does not match the composition's variables",
      )
    : command;
}

/**
 * --brand FILE: a brand kit exported by the app (Settings -> Brand); its logo, colours and fonts
 * fill the composition's brand variables (docs/composition-format.md) unless --variables sets them.
 */
export function addBrandFlag(command: Command): Command {
  return command.option(
    "--brand <file>",
    "brand kit file (exported from the app's Settings -> Brand): fills the brand-* variables",
  );
}

/** --poll-interval and --max-wait, for the commands that wait for a render. */
export function addWaitFlags(command: Command): Command {
  return command
    .option(
      "--poll-interval <seconds>",
      "seconds between status checks",
      parseStrictInteger("--poll-interval", 1, 3600),
      DEFAULT_POLL_INTERVAL_SECONDS,
    )
    .option(
      "--max-wait <minutes>",
      "minutes to wait for the render",
      parseStrictInteger("--max-wait", 1, 10_080),
      DEFAULT_MAX_WAIT_MINUTES,
    );
}

export function parseStrictInteger(flag: string, min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
      throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, not "${value}".`);
    }
    return Number(value);
  };
}

function parseVariablesJson(text: string, source: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${source} is not valid JSON: ${(error as Error).message}`,
      `Example: --variables '{"title":"Hello"}'`,
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(
      `${source} must be a JSON object of variable values.`,
      `Example: --variables '{"title":"Hello"}'`,
    );
  }
  return parsed as Record<string, unknown>;
}

/** Reads --variables or --variables-file (never both) into a values object. */
export function readVariablesOption(options: {
  variables?: string;
  variablesFile?: string;
}): Record<string, unknown> | undefined {
  if (options.variables !== undefined && options.variablesFile !== undefined) {
    throw new UsageError("Use either --variables or --variables-file, not both.");
  }
  if (options.variables !== undefined) return parseVariablesJson(options.variables, "--variables");
  if (options.variablesFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(options.variablesFile, "utf8");
    } catch {
      throw new UsageError(
        `Cannot read --variables-file ${options.variablesFile}.`,
        "Check the path to the JSON file.",
      );
    }
    return parseVariablesJson(text, `--variables-file ${options.variablesFile}`);
  }
  return undefined;
}

/** --also: more files from the same render (shared/outputs.ts parseAlso). */
export function addAlsoFlag(command: Command): Command {
  return command.option(
    "--also <list>",
    "more files from the same render, comma-separated: an aspect ratio (9:16, 1:1: the page laid out at that size), a format (gif, webm...), still@SECONDS[:png|jpeg|webp]; saved next to the main file (out-9x16.mp4, out-2.5s.png)",
  );
}

/**
 * The outputs `--also` adds after the main one, checked with the render's settings; a problem names
 * the token (`--also gif: a gif plays at most 50 fps...`). Undefined without the flag.
 */
export function readAlsoOption(
  value: string | undefined,
  settings: { fps: number; format: OutputFormat; resolution: Resolution },
): OutputSpec[] | undefined {
  if (value === undefined) return undefined;
  let also: OutputSpec[];
  try {
    also = parseAlso(value);
  } catch (error) {
    throw new UsageError(
      `--also: ${(error as Error).message}.`,
      "Example: --also 9:16,1:1,gif,still@2.5",
    );
  }
  if (also.length + 1 > MAX_OUTPUTS) {
    throw new UsageError(
      `--also adds at most ${MAX_OUTPUTS - 1} files to the main one (got ${also.length}).`,
    );
  }
  const problem = checkOutputs({ ...settings, outputs: [{}, ...also] });
  if (problem) {
    const token = value
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean)[problem.index - 1];
    throw new UsageError(`--also ${token ?? ""}: ${problem.message}.`);
  }
  return also;
}
