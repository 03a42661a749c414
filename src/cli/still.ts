// `svc still [dir] --time 2.5 -o poster.png`: one frame of a composition as PNG, JPEG or WebP on
// this computer (a poster, a social card). runStill does the work and prints; the command only
// turns flags into StillOptions.
import type { RenderCaptions } from "../engine/contract";
import { addCaptionsFlags, readCaptionsOption, type CaptionsFlags } from "./captions";
import { basename, join, resolve } from "node:path";
import { Option, type Command } from "commander";
import { valuesWithBrand } from "../core/local";
import {
  renderStill,
  STILL_FORMATS,
  stillFormatFor,
  type StillFormat,
  type StillResult,
} from "../engine/index";
import { DEFAULT_FPS, FPS_MAX, FPS_MIN } from "../shared/limits";
import {
  RESOLUTIONS,
  type AspectRatio,
  type Quality,
  type Resolution,
} from "../shared/render-options";
import { printJson, runAction } from "./command";
import { UsageError } from "./errors";
import type { CliIo } from "./io";
import {
  addAspectRatioFlag,
  addBrandFlag,
  addCompositionFlag,
  addVariablesFlags,
  parseStrictInteger,
  readVariablesOption,
} from "./options";

export interface StillOptions {
  dir: string;
  time: number;
  output?: string;
  format?: StillFormat;
  composition: string;
  fps: number;
  quality?: Quality;
  resolution: Resolution;
  aspectRatio?: AspectRatio;
  variables?: Record<string, unknown>;
  strictVariables?: boolean;
  /** Captions drawn on the frame (--captions). */
  captions?: RenderCaptions | undefined;
  json?: boolean;
  signal?: AbortSignal;
}

const STILL_EXTENSION: Record<StillFormat, string> = { png: "png", jpeg: "jpg", webp: "webp" };

export async function runStill(options: StillOptions, io: CliIo): Promise<StillResult> {
  const format = options.format ?? (options.output ? stillFormatFor(options.output) : "png");
  const output =
    options.output ??
    resolve("renders", `${basename(resolve(options.dir)) || "still"}.${STILL_EXTENSION[format]}`);
  const result = await renderStill({
    projectDir: options.dir,
    composition: options.composition,
    output,
    time: options.time,
    stillFormat: format,
    fps: options.fps,
    ...(options.quality ? { quality: options.quality } : {}),
    resolution: options.resolution,
    ...(options.aspectRatio ? { aspectRatio: options.aspectRatio } : {}),
    ...(options.variables ? { variables: options.variables } : {}),
    strictVariables: Boolean(options.strictVariables),
    ...(options.captions ? { captions: options.captions } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (options.json) {
    printJson(io, {
      output_path: result.outputPath,
      format: result.format,
      frame: result.frame,
      time_seconds: result.timeSeconds,
      width: result.width,
      height: result.height,
      warnings: result.warnings,
    });
  } else {
    for (const warning of result.warnings) io.stderr.write(`warning: ${warning}\n`);
    io.stdout.write(
      `Wrote ${result.outputPath} (${result.format}, ${result.width}x${result.height}, frame ${result.frame} at ${result.timeSeconds.toFixed(3)} s)\n`,
    );
  }
  return result;
}

function parseTime(value: string): number {
  const seconds = Number(value);
  if (value.trim() === "" || !Number.isFinite(seconds) || seconds < 0) {
    throw new UsageError(
      `--time must be a number of seconds of at least 0, not "${value}".`,
      "Example: --time 2.5",
    );
  }
  return seconds;
}

type StillFlags = Omit<StillOptions, "dir" | "variables" | "signal" | "captions"> &
  CaptionsFlags & {
    brand?: string;
    variables?: string;
    variablesFile?: string;
  };

export function registerStillCommand(program: Command, io: CliIo): void {
  const command = program
    .command("still")
    .description("render one frame of a composition to a PNG, JPEG or WebP file on this computer")
    .argument("[dir]", "project folder", ".")
    .option("--time <seconds>", "time of the frame, in seconds (rounded to a frame)", parseTime, 0)
    .option("-o, --output <file>", "output file (default: renders/<project>.png)")
    .addOption(
      new Option(
        "--format <format>",
        "png, jpeg or webp (default: from -o's extension, else png)",
      ).choices(STILL_FORMATS),
    )
    .option(
      "--fps <n>",
      `frame rate the time is rounded to (${FPS_MIN}-${FPS_MAX}), as in a video`,
      parseStrictInteger("--fps", FPS_MIN, FPS_MAX),
      DEFAULT_FPS,
    )
    .addOption(
      new Option("--resolution <resolution>", "output resolution")
        .choices(RESOLUTIONS)
        .default("1080p"),
    );
  addCompositionFlag(command);
  addAspectRatioFlag(command, "from data-width/data-height");
  addCaptionsFlags(command, false);
  addBrandFlag(command);
  addVariablesFlags(command)
    .option("--json", "print the result as JSON on stdout")
    .action((dir: string, flags: StillFlags) =>
      runAction(io, flags.json, async (signal) => {
        const given = readVariablesOption(flags);
        const variables = flags.brand
          ? await valuesWithBrand(flags.brand, join(dir, flags.composition), given)
          : given;
        return runStill(
          { ...flags, dir, variables, captions: readCaptionsOption(flags), signal },
          io,
        );
      }),
    );
}
