// `svc render [dir] --quote`: what a local render would take, without rendering: the frames, the
// credits the same render would cost on a service (the charge rule), and the estimated seconds on
// this computer from a few sampled frames (engine/quote.ts), drawn as `svc render` draws them.
import { sampleRenderCost } from "../engine/index";
import { localOutputsSeconds, quoteOutputs, type LocalRenderQuote } from "../shared/quote";
import { printJson } from "./command";
import type { CliIo } from "./io";
import type { RenderCommandOptions } from "./render";

export async function runRenderQuote(
  options: RenderCommandOptions,
  io: CliIo,
): Promise<LocalRenderQuote> {
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
  // The same lines the service charges (outputCredits -> creditsFor), one per output.
  const outputs = quoteOutputs(
    { ...options, ...(options.also ? { outputs: [{}, ...options.also] } : {}) },
    sampled.frames,
  );
  const quote: LocalRenderQuote = {
    frames: sampled.frames,
    duration_seconds: sampled.durationSeconds,
    credits: outputs.reduce((sum, output) => sum + output.credits, 0),
    estimated_seconds:
      Math.round(localOutputsSeconds(sampled, outputs, sampled.estimatedLocalSeconds) * 10) / 10,
    workers: sampled.localWorkers,
    ms_per_frame: Math.round(sampled.cost.msPerFrame),
    ...(options.also ? { outputs } : {}),
  };
  if (options.json) {
    printJson(io, quote);
  } else {
    io.stdout.write(
      `${quote.frames} frames (${quote.duration_seconds.toFixed(2)} s at ${options.fps} fps) · about ${Math.round(quote.estimated_seconds)} s here with ${quote.workers} workers · ${quote.credits} credits on a service${quote.outputs ? ` for ${quote.outputs.length} outputs` : ""}\n`,
    );
    for (const line of quote.outputs ?? []) {
      io.stdout.write(`  output ${line.index}: ${line.frames} frames · ${line.credits} credits\n`);
    }
    io.stderr.write("Nothing was rendered.\n");
  }
  return quote;
}
