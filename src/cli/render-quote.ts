// `svc render [dir] --quote`: what a local render would take, without rendering: the frames, the
// credits the same render would cost on a service (the charge rule), and the estimated seconds on
// this computer from a few sampled frames (engine/quote.ts), drawn as `svc render` draws them.
import { sampleRenderCost } from "../engine/quote";
import { quoteCredits, type LocalRenderQuote } from "../shared/quote";
import { printJson } from "./command";
import type { CliIo } from "./io";
import type { RenderOptions } from "./render";

export async function runRenderQuote(options: RenderOptions, io: CliIo): Promise<LocalRenderQuote> {
  const sampled = await sampleRenderCost({
    projectDir: options.dir,
    composition: options.composition,
    fps: options.fps,
    quality: options.quality,
    format: options.format,
    resolution: options.resolution,
    workers: options.workers,
    ...(options.aspectRatio ? { aspectRatio: options.aspectRatio } : {}),
    ...(options.variables ? { variables: options.variables } : {}),
    strictVariables: Boolean(options.strictVariables),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const quote: LocalRenderQuote = {
    frames: sampled.frames,
    duration_seconds: sampled.durationSeconds,
    credits: quoteCredits(sampled.frames, options.fps, options.resolution),
    estimated_seconds: Math.round(sampled.estimatedLocalSeconds * 10) / 10,
    workers: sampled.localWorkers,
    ms_per_frame: Math.round(sampled.cost.msPerFrame),
  };
  if (options.json) {
    printJson(io, quote);
  } else {
    io.stdout.write(
      `${quote.frames} frames (${quote.duration_seconds.toFixed(2)} s at ${options.fps} fps) · about ${Math.round(quote.estimated_seconds)} s here with ${quote.workers} workers · ${quote.credits} credits on a service\n`,
    );
    io.stderr.write("Nothing was rendered.\n");
  }
  return quote;
}
