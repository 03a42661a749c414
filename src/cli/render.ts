// `svc render [dir]`: render a composition on this computer (no service, no account).
// runRender does the work and prints; the command only turns flags into RenderOptions.
import { basename, resolve } from "node:path";
import type { Command } from "commander";
import { renderComposition } from "../engine/render";
import type { RenderProgress, RenderResult } from "../engine/types";
import {
  FILE_EXTENSIONS,
  type AspectRatio,
  type OutputFormat,
  type Quality,
  type Resolution,
} from "../shared/render-options";
import { printJson, runAction } from "./command";
import {
  addAspectRatioFlag,
  addCompositionFlag,
  addOutputOptionFlags,
  addVariablesFlags,
  parseStrictInteger,
  readVariablesOption,
} from "./options";
import { createProgressLine } from "./progress";
import type { CliIo } from "./io";

export interface RenderOptions {
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
  workers: number | "auto";
  json?: boolean;
  signal?: AbortSignal;
}

export type RenderCommandResult = RenderResult & { elapsedSeconds: number };

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

export async function runRender(options: RenderOptions, io: CliIo): Promise<RenderCommandResult> {
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
      workers: options.workers,
      ...(options.signal ? { signal: options.signal } : {}),
      onProgress: (p) =>
        progress.update(p.framesTotal ? p.framesDone / p.framesTotal : 0, describeProgress(p)),
    });
  } finally {
    progress.done();
  }
  const elapsedSeconds = (Date.now() - started) / 1000;
  if (options.json) {
    printJson(io, {
      output_path: result.outputPath,
      thumbnail_path: result.thumbnailPath ?? null,
      width: result.width,
      height: result.height,
      duration_seconds: result.durationSeconds,
      frames: result.frames,
      repeated_frames: result.repeatedFrames,
      warnings: result.warnings,
      elapsed_seconds: elapsedSeconds,
    });
  } else {
    for (const warning of result.warnings) io.stderr.write(`warning: ${warning}\n`);
    io.stdout.write(
      `Rendered ${result.outputPath} (${result.width}x${result.height}, ${result.durationSeconds.toFixed(2)} s, ${result.frames} frames) in ${elapsedSeconds.toFixed(1)} s\n`,
    );
    if (result.thumbnailPath) io.stdout.write(`Thumbnail ${result.thumbnailPath}\n`);
  }
  return { ...result, elapsedSeconds };
}

type RenderFlags = Omit<RenderOptions, "dir" | "variables" | "signal"> & {
  variables?: string;
  variablesFile?: string;
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
        const options = { ...flags, dir, variables: readVariablesOption(flags), signal };
        if (!flags.quote) return runRender(options, io);
        const { runRenderQuote } = await import("./render-quote");
        return runRenderQuote(options, io);
      }),
    );
}
