// `svc render [dir]`: render a composition on this computer (no service, no account).
// runRender does the work and prints; the command only turns flags into RenderCommandOptions. With
// `--also` the same composition is rendered again per extra file (another aspect ratio's viewport,
// another format, a still), each named next to the main file.
import { stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import type { Command } from "commander";
import { valuesWithBrand } from "../core/local";
import { renderComposition, renderOutput } from "../engine/index";
import { detectAspectRatio } from "../shared/composition-scan";
import { extraOutputPath, planOutputs, type OutputSpec } from "../shared/outputs";
import type { RenderProgress, RenderResult } from "../engine/contract";
import {
  FILE_EXTENSIONS,
  type AspectRatio,
  type OutputFormat,
  type Quality,
  type Resolution,
} from "../shared/render-options";
import { printJson, runAction } from "./command";
import {
  addAlsoFlag,
  addAspectRatioFlag,
  addBrandFlag,
  addCompositionFlag,
  addOutputOptionFlags,
  addVariablesFlags,
  parseStrictInteger,
  readAlsoOption,
  readVariablesOption,
} from "./options";
import { createProgressLine } from "./progress";
import type { CliIo } from "./io";
import { addCaptionsFlags, readCaptionsOption, type CaptionsFlags } from "./captions";
import type { RenderCaptions } from "../engine/contract";

export interface RenderCommandOptions {
  dir: string;
  output?: string;
  composition: string;
  fps: number;
  quality: Quality;
  format: OutputFormat;
  resolution: Resolution;
  aspectRatio?: AspectRatio;
  variables?: Record<string, unknown>;
  strictVariables?: boolean;
  /** Captions: burned in, a soft track, a sidecar (--captions and its flags). */
  captions?: RenderCaptions | undefined;
  workers: number | "auto";
  /** More files from the same composition (`--also`), named next to the main one. */
  also?: OutputSpec[] | undefined;
  json?: boolean;
  signal?: AbortSignal;
}

/** One file of a render with --also, as --json prints it (snake_case, like the API's outputs). */
export interface LocalOutputFile {
  index: number;
  kind: "video" | "still";
  format: string;
  aspect_ratio: AspectRatio;
  width: number;
  height: number;
  time: number | null;
  output_path: string;
  bytes: number;
}

export type RenderCommandResult = RenderResult & {
  elapsedSeconds: number;
  files?: LocalOutputFile[];
};

function parseWorkers(value: string): number | "auto" {
  if (value === "auto") return "auto";
  return parseStrictInteger("--workers", 1, 16)(value);
}

function describeProgress(progress: RenderProgress): string {
  if (progress.stage === "preparing") return "starting the browser";
  if (progress.stage === "finishing") return "joining segments and mixing audio";
  const eta = progress.etaSeconds === undefined ? "" : ` · ETA ${Math.ceil(progress.etaSeconds)}s`;
  return `${progress.framesDone}/${progress.framesTotal} frames · ${progress.fps.toFixed(1)} fps${eta}`;
}

export async function runRender(
  options: RenderCommandOptions,
  io: CliIo,
): Promise<RenderCommandResult> {
  const progress = createProgressLine(io.stderr);
  const started = Date.now();
  let result: RenderResult;
  try {
    const output =
      options.output ??
      resolve(
        "renders",
        `${basename(resolve(options.dir)) || "render"}.${FILE_EXTENSIONS[options.format]}`,
      );
    result = await renderComposition({
      // With --also every file is drawn at its own aspect ratio's viewport (data-aspect-ratio).
      ...(options.also ? { adaptAspectRatio: true } : {}),
      projectDir: options.dir,
      composition: options.composition,
      output,
      fps: options.fps,
      quality: options.quality,
      format: options.format,
      resolution: options.resolution,
      ...(options.aspectRatio ? { aspectRatio: options.aspectRatio } : {}),
      ...(options.variables ? { variables: options.variables } : {}),
      strictVariables: Boolean(options.strictVariables),
      ...(options.captions ? { captions: options.captions } : {}),
      workers: options.workers,
      ...(options.signal ? { signal: options.signal } : {}),
      onProgress: (p) =>
        progress.update(p.framesTotal ? p.framesDone / p.framesTotal : 0, describeProgress(p)),
    });
  } finally {
    progress.done();
  }
  const files = options.also ? await renderAlso(options, result, io) : undefined;
  const elapsedSeconds = (Date.now() - started) / 1000;
  if (options.json) {
    printJson(io, {
      output_path: result.outputPath,
      thumbnail_path: result.thumbnailPath ?? null,
      ...(result.captionsPath ? { captions_path: result.captionsPath } : {}),
      width: result.width,
      height: result.height,
      duration_seconds: result.durationSeconds,
      frames: result.frames,
      repeated_frames: result.repeatedFrames,
      warnings: result.warnings,
      elapsed_seconds: elapsedSeconds,
      ...(files ? { outputs: files } : {}),
    });
  } else {
    for (const warning of result.warnings) io.stderr.write(`warning: ${warning}\n`);
    io.stdout.write(
      `Rendered ${result.outputPath} (${result.width}x${result.height}, ${result.durationSeconds.toFixed(2)} s, ${result.frames} frames) in ${elapsedSeconds.toFixed(1)} s\n`,
    );
    if (result.thumbnailPath) io.stdout.write(`Thumbnail ${result.thumbnailPath}\n`);
    if (result.captionsPath) io.stdout.write(`Captions ${result.captionsPath}\n`);
    for (const file of files?.slice(1) ?? []) {
      io.stdout.write(`Also ${file.output_path} (${file.width}x${file.height})\n`);
    }
  }
  return { ...result, elapsedSeconds, ...(files ? { files } : {}) };
}

/**
 * The --also files after the main one, one after another, each named next to it
 * (shared/outputs.ts extraOutputPath: out-9x16.mp4, out.gif, out-2.5s.png).
 */
async function renderAlso(
  options: RenderCommandOptions,
  main: RenderResult,
  io: CliIo,
): Promise<LocalOutputFile[]> {
  const mainRatio =
    options.aspectRatio ?? detectAspectRatio(main.width, main.height) ?? ("16:9" as const);
  const planned = planOutputs({
    format: options.format,
    resolution: options.resolution,
    aspect_ratio: mainRatio,
    outputs: [{}, ...(options.also ?? [])],
  });
  const files: LocalOutputFile[] = [
    {
      index: 0,
      kind: "video",
      format: options.format,
      aspect_ratio: mainRatio,
      width: main.width,
      height: main.height,
      time: null,
      output_path: main.outputPath,
      bytes: (await stat(main.outputPath)).size,
    },
  ];
  const common = {
    projectDir: options.dir,
    composition: options.composition,
    fps: options.fps,
    quality: options.quality,
    ...(options.variables ? { variables: options.variables } : {}),
    strictVariables: Boolean(options.strictVariables),
    ...(options.captions ? { captions: options.captions } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    adaptAspectRatio: true,
  };
  for (const output of planned.slice(1)) {
    const aspectRatio = output.aspect_ratio ?? mainRatio;
    const path = extraOutputPath(
      main.outputPath,
      { aspect_ratio: mainRatio, resolution: options.resolution },
      { ...output, aspect_ratio: aspectRatio },
      files.map((file) => file.output_path),
    );
    const progress = createProgressLine(io.stderr);
    try {
      const file = await renderOutput({
        ...common,
        file: output,
        output: path,
        resolution: output.resolution,
        aspectRatio,
        workers: options.workers,
        thumbnail: false,
        onProgress: (p) =>
          progress.update(p.framesTotal ? p.framesDone / p.framesTotal : 0, describeProgress(p)),
      });
      files.push({
        index: output.index,
        kind: file.kind,
        format: file.format,
        aspect_ratio: aspectRatio,
        width: file.width,
        height: file.height,
        time: file.timeSeconds,
        output_path: file.outputPath,
        bytes: (await stat(file.outputPath)).size,
      });
    } finally {
      progress.done();
    }
  }
  return files;
}

type RenderFlags = Omit<
  RenderCommandOptions,
  "dir" | "variables" | "signal" | "also" | "captions"
> &
  CaptionsFlags & {
    brand?: string;
    variables?: string;
    variablesFile?: string;
    also?: string;
  };

export function registerRenderCommand(program: Command, io: CliIo): void {
  const command = program
    .command("render")
    .description("render a composition to a video file on this computer")
    .argument("[dir]", "project folder", ".")
    .option("-o, --output <file>", "output file (default: renders/<project>.<format>)");
  addCompositionFlag(command);
  addOutputOptionFlags(command);
  addAspectRatioFlag(command, "from data-width/data-height");
  addAlsoFlag(command);
  addCaptionsFlags(command, true);
  addBrandFlag(command);
  addVariablesFlags(command)
    .option(
      "--workers <n>",
      'parallel browser workers, or "auto" (one per core, up to 4)',
      parseWorkers,
      "auto",
    )
    .option("--quote", "frames, credits and estimated time from a few sampled frames; no render")
    .option("--json", "print the result as JSON on stdout")
    .action((dir: string, flags: RenderFlags & { quote?: boolean }) =>
      runAction(io, flags.json, async (signal) => {
        const given = readVariablesOption(flags);
        const options = {
          ...flags,
          dir,
          variables: flags.brand
            ? await valuesWithBrand(flags.brand, join(dir, flags.composition), given)
            : given,
          also: readAlsoOption(flags.also, flags),
          captions: readCaptionsOption(flags),
          signal,
        };
        if (!flags.quote) return runRender(options, io);
        const { runRenderQuote } = await import("./render-quote");
        return runRenderQuote(options, io);
      }),
    );
}
