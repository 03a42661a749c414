// `svc cloud render --quote`: what a render would cost and how long it would take, before anything
// is uploaded or spent. The composition's cost is measured here on a few sampled frames (the
// engine's sampleRenderCost: it needs the browser `svc render` uses; without one the service's
// own history stands in), and the service answers with the credits (its charge rule) and the time
// given its queue and workers (POST /v3/svc/renders/quote).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { prepareProject } from "../../core/index";
import type { ProjectSource, RenderSettings } from "../../core/index";
import { scanCompositionHtml } from "../../shared/composition-scan";
import { localOutputsSeconds, type RenderQuote } from "../../shared/quote";
import { printJson } from "../command";
import { UsageError } from "../errors";
import type { CliIo } from "../io";
import { withCloudContext } from "./context";

export interface CloudQuoteResult {
  quote: RenderQuote;
  /** This computer: `svc render`'s estimated seconds, from the sampled frames (null: no browser). */
  local: { estimated_seconds: number; workers: number; ms_per_frame: number } | null;
}

export async function runCloudQuote(
  options: {
    project: ProjectSource;
    settings: RenderSettings;
    json?: boolean;
    signal?: AbortSignal;
  },
  io: CliIo,
): Promise<CloudQuoteResult> {
  const { project, settings } = options;
  if (project.type !== "dir") {
    throw new UsageError(
      "--quote measures a local project; it cannot be used with --asset-id or --url.",
      "Quote the project folder itself: svc cloud render DIR --quote",
    );
  }
  await prepareProject({ ...settings, dir: project.dir });
  const { sampleRenderCost } = await import("../../engine/index");
  const sampled = await sampleRenderCost({
    projectDir: project.dir,
    composition: settings.composition,
    fps: settings.fps,
    quality: settings.quality,
    format: settings.format,
    resolution: settings.resolution,
    ...(settings.aspectRatio ? { aspectRatio: settings.aspectRatio } : {}),
    ...(settings.variables ? { variables: settings.variables } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  }).catch(async (error: unknown) => {
    // No browser here: the service estimates from its own renders, given the declared duration.
    const html = await readFile(join(project.dir, settings.composition), "utf8");
    const scanned = scanCompositionHtml(html);
    if (!scanned.ok || scanned.scan.duration === undefined) throw error;
    io.stderr.write(`note: the frames could not be sampled here (${String(error)}).\n`);
    return { durationSeconds: scanned.scan.duration, sampled: undefined };
  });
  const measured = "cost" in sampled ? sampled : undefined;
  const quote = await withCloudContext(io, (context) =>
    context.client.quoteRender(
      {
        duration: sampled.durationSeconds,
        fps: settings.fps,
        quality: settings.quality,
        format: settings.format,
        resolution: settings.resolution,
        ...(settings.aspectRatio ? { aspect_ratio: settings.aspectRatio } : {}),
        ...(settings.also?.length ? { outputs: [{}, ...settings.also] } : {}),
        ...(measured
          ? {
              measured_ms_per_frame: measured.cost.msPerFrame,
              measured_startup_ms: measured.cost.startupMs,
            }
          : {}),
      },
      options.signal,
    ),
  );
  const result: CloudQuoteResult = {
    quote,
    local: measured
      ? {
          // `svc render --also` renders the outputs one after another.
          estimated_seconds:
            Math.round(
              localOutputsSeconds(measured, quote.outputs, measured.estimatedLocalSeconds) * 10,
            ) / 10,
          workers: measured.localWorkers,
          ms_per_frame: Math.round(measured.cost.msPerFrame),
        }
      : null,
  };
  if (options.json) {
    printJson(io, result);
  } else {
    const lines =
      quote.outputs.length > 1
        ? quote.outputs
            .map(
              (line) => `  output ${line.index}: ${line.frames} frames · ${line.credits} credits\n`,
            )
            .join("")
        : "";
    io.stdout.write(
      `${quote.frames} frames (${quote.duration.toFixed(2)} s at ${settings.fps} fps) · ${quote.credits} credits${quote.outputs.length > 1 ? ` for ${quote.outputs.length} outputs` : ""}\n` +
        lines +
        `On the service: about ${formatSeconds(quote.estimated_total_seconds)} (${formatSeconds(quote.estimated_queue_seconds)} in the queue: ${quote.queue.queued} queued, ${quote.queue.rendering} rendering on ${quote.queue.workers} workers; cost per frame from ${quote.cost_source.replace("_", " ")})\n` +
        (result.local
          ? `On this computer (svc render, ${result.local.workers} workers): about ${formatSeconds(result.local.estimated_seconds)}\n`
          : ""),
    );
    io.stderr.write("Nothing was uploaded or charged.\n");
  }
  return result;
}

function formatSeconds(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}
