// `svc render [dir]`: render a composition on this computer (no service, no account).
import { basename, resolve } from "node:path";
import { Option, type Command } from "commander";
import { renderComposition } from "../engine/render";
import type { RenderProgress } from "../engine/types";
import {
  ASPECT_RATIOS,
  FILE_EXTENSIONS,
  type AspectRatio,
  type OutputFormat,
  type Quality,
  type Resolution,
} from "../shared/render-options";
import { reportError } from "./errors";
import { addOutputOptionFlags, parseStrictInteger, readVariablesOption } from "./options";
import { createProgressLine } from "./progress";
import type { CliIo } from "./io";

interface RenderFlags {
  output?: string;
  composition: string;
  fps: number;
  quality: Quality;
  format: OutputFormat;
  resolution: Resolution;
  aspectRatio?: AspectRatio;
  variables?: string;
  variablesFile?: string;
  strictVariables?: boolean;
  workers: number | "auto";
  json?: boolean;
}

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

export function registerRenderCommand(program: Command, io: CliIo): void {
  addOutputOptionFlags(
    program
      .command("render")
      .description("render a composition to a video file on this computer")
      .argument("[dir]", "project folder", ".")
      .option("-o, --output <file>", "output file (default: renders/<project>.<format>)")
      .option(
        "-c, --composition <path>",
        "entry HTML file, relative to the project folder",
        "index.html",
      ),
  )
    .addOption(
      new Option(
        "--aspect-ratio <ratio>",
        "aspect ratio (default: from data-width/data-height)",
      ).choices(ASPECT_RATIOS),
    )
    .option("--variables <json>", "variable values as a JSON object")
    .option("--variables-file <file>", "variable values from a JSON file")
    .option("--strict-variables", "fail when a value does not match the composition's variables")
    .option(
      "--workers <n>",
      'parallel browser workers, or "auto" (one per core, up to 4)',
      parseWorkers,
      "auto",
    )
    .option("--json", "print the result as JSON on stdout")
    .action(async (dir: string, flags: RenderFlags) => {
      const controller = new AbortController();
      const onSigint = () => controller.abort();
      process.once("SIGINT", onSigint);
      const progress = createProgressLine(io.stderr);
      const started = Date.now();
      try {
        const variables = readVariablesOption(flags);
        const output =
          flags.output ??
          resolve(
            "renders",
            `${basename(resolve(dir)) || "render"}.${FILE_EXTENSIONS[flags.format]}`,
          );
        const result = await renderComposition({
          projectDir: dir,
          composition: flags.composition,
          output,
          fps: flags.fps,
          quality: flags.quality,
          format: flags.format,
          resolution: flags.resolution,
          ...(flags.aspectRatio ? { aspectRatio: flags.aspectRatio } : {}),
          ...(variables ? { variables } : {}),
          strictVariables: Boolean(flags.strictVariables),
          workers: flags.workers,
          signal: controller.signal,
          onProgress: (p) =>
            progress.update(p.framesTotal ? p.framesDone / p.framesTotal : 0, describeProgress(p)),
        });
        progress.done();
        const elapsedSeconds = (Date.now() - started) / 1000;
        if (flags.json) {
          io.stdout.write(`${JSON.stringify({ ...result, elapsedSeconds }, null, 2)}\n`);
        } else {
          for (const warning of result.warnings) io.stderr.write(`warning: ${warning}\n`);
          io.stdout.write(
            `Rendered ${result.outputPath} (${result.width}x${result.height}, ${result.durationSeconds.toFixed(2)} s, ${result.frames} frames) in ${elapsedSeconds.toFixed(1)} s\n`,
          );
          if (result.thumbnailPath) io.stdout.write(`Thumbnail ${result.thumbnailPath}\n`);
        }
      } catch (error) {
        progress.done();
        reportError(error, Boolean(flags.json), io);
      } finally {
        process.off("SIGINT", onSigint);
      }
    });
}
