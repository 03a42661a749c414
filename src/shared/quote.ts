// A quote before anything is spent: frames, credits and the estimated time of a render. Credits
// come from creditsFor (credits.ts), the function the service charges with, so a quote's credits
// are the charge. Times come from the measured cost of a few sampled frames of this composition
// (engine/quote.ts) and, on the service, its queue and workers; the model is written once here so
// the CLI, the app and the service estimate alike. Figures against measured renders: bench/quote.ts.
import { z } from "zod";
import { creditsFor, outputCredits } from "./credits";
import { FPS_MAX } from "./limits";
import { renderSettingsRule, renderOptionsShape, type Resolution } from "./render-options";
import { outputFrames, outputsRule, outputsShape, planOutputs } from "./outputs";
import type { AspectRatio, OutputFormat } from "./render-options";
import { frameCount } from "./frames";

/** What a sampled composition costs to render (engine/quote.ts measures it). */
/** `svc render --quote --json`: the estimate of a render on this computer. */
export interface LocalRenderQuote {
  frames: number;
  duration_seconds: number;
  credits: number;
  estimated_seconds: number;
  workers: number;
  ms_per_frame: number;
  /** With `--also`: each output's frames and credits (`credits` is their sum). */
  outputs?: OutputQuote[];
}

export interface FrameCost {
  /** Milliseconds to draw and read back one frame with one browser page (sampled mean). */
  msPerFrame: number;
  /** Milliseconds from nothing to a page ready for frame 0 (browser start, page load, fonts). */
  startupMs: number;
}

/**
 * Encoding cost per frame, relative to drawing it (the encoders share the cores with the
 * browsers), and the fixed cost of the end (join, audio, thumbnail). Fitted to the examples on
 * this machine when nothing else runs (bench/quote.ts; 1500 ms, fitted under load 15-25, put every
 * example 1.0-1.7 s over on a quiet machine).
 */
export const ENCODE_SHARE = 0.25;
export const FINISH_MS = 500;
/** Pages that draw side by side on separate cores: what a second one adds. */
export const PARALLEL_EFFICIENCY = 0.8;

/** Frames of a render: its duration at its fps (shared/frames.ts), at least one. */
export function framesOf(durationSeconds: number, fps: number): number {
  return Math.max(1, frameCount(durationSeconds, fps));
}

/** Credits of a render: exactly the charge (creditsFor), for the duration its frames make. */
export function quoteCredits(frames: number, fps: number, resolution: Resolution): number {
  return creditsFor(frames / fps, resolution);
}

/** One output's line of a quote. */
export interface OutputQuote {
  index: number;
  frames: number;
  credits: number;
}

/**
 * A render's outputs, each with its frames and credits (outputCredits -> creditsFor, the function
 * the charge uses, for the duration `frames` make at `fps`); their credits add up to the charge.
 */
export function quoteOutputs(
  settings: {
    fps: number;
    format: OutputFormat;
    resolution: Resolution;
    aspect_ratio?: AspectRatio | undefined;
    outputs?: Parameters<typeof planOutputs>[0]["outputs"];
  },
  frames: number,
): OutputQuote[] {
  return planOutputs(settings).map((output) => ({
    index: output.index,
    frames: outputFrames(output, frames),
    credits: outputCredits(output, frames / settings.fps, settings.fps),
  }));
}

/**
 * Seconds to render outputs of these frame counts: each output renders on one worker, side by side
 * on as many as there are (the longest output, or all the work spread over the workers).
 */
export function estimateOutputsSeconds(
  cost: FrameCost,
  outputFrameCounts: number[],
  workers: number,
): number {
  const each = outputFrameCounts.map((frames) => estimateRenderSeconds(cost, frames, 1));
  const total = each.reduce((a, b) => a + b, 0);
  return Math.max(Math.max(...each), total / Math.max(1, workers));
}

/**
 * Seconds `svc render --also` takes on this computer: the outputs one after another (a still is
 * start-up and one frame). One output: the engine's own estimate, `mainSeconds`.
 */
export function localOutputsSeconds(
  measured: { cost: FrameCost; localWorkers: number },
  outputs: { frames: number }[],
  mainSeconds: number,
): number {
  if (outputs.length <= 1) return mainSeconds;
  return outputs.reduce(
    (sum, output) =>
      sum + estimateRenderSeconds(measured.cost, output.frames, measured.localWorkers),
    0,
  );
}

/** Seconds a render of `frames` takes with `workers` browser pages (startup, frames, finish). */
export function estimateRenderSeconds(cost: FrameCost, frames: number, workers: number): number {
  const speedup = workers <= 1 ? 1 : workers * PARALLEL_EFFICIENCY;
  const framesMs = (frames * cost.msPerFrame * (1 + ENCODE_SHARE)) / speedup;
  return (cost.startupMs + framesMs + FINISH_MS) / 1000;
}

/** What the service has on its hands when a quote is asked. */
export interface ServiceLoad {
  /** Renders waiting for a worker, and renders being rendered. */
  queued: number;
  rendering: number;
  /** Render jobs the service runs at once. */
  workers: number;
  /** Mean seconds of its recent renders (undefined: none finished yet). */
  recentRenderSeconds: number | undefined;
}

/**
 * Seconds until a render submitted now starts: the renders ahead of it (a running one is taken as
 * half done) spread over the workers, when every worker is busy.
 */
export function estimateQueueSeconds(load: ServiceLoad, renderSeconds: number): number {
  const ahead = load.queued + load.rendering * 0.5;
  const free = load.workers - load.rendering - load.queued;
  if (free > 0) return 0;
  const each = load.recentRenderSeconds ?? renderSeconds;
  return (ahead * each) / Math.max(1, load.workers);
}

/** POST /v3/svc/renders/quote: the render's settings and, when the client sampled it, its cost. */
export const renderQuoteRequestSchema = z
  .object({
    ...renderOptionsShape,
    /** Seconds of the composition (data-duration, or as the client measured it). */
    duration: z
      .number()
      .positive()
      .max(24 * 3600),
    /** The composition's own cost, sampled by the client (engine/quote.ts); else the service's history. */
    measured_ms_per_frame: z.number().positive().max(600_000).optional(),
    measured_startup_ms: z.number().min(0).max(600_000).optional(),
    /** The render's outputs as in the render request; the quote then itemises them. */
    ...outputsShape,
  })
  .superRefine(renderSettingsRule)
  .superRefine(outputsRule);
export type RenderQuoteRequest = z.input<typeof renderQuoteRequestSchema>;

export const renderQuoteSchema = z.object({
  frames: z
    .number()
    .int()
    .min(1)
    .max(24 * 3600 * FPS_MAX),
  duration: z.number(),
  credits: z.number(),
  /** Seconds: waiting in the queue, rendering, and both. */
  estimated_queue_seconds: z.number(),
  estimated_render_seconds: z.number(),
  estimated_total_seconds: z.number(),
  /** Where the per-frame cost came from: the client's samples, the service's recent renders, or a default. */
  cost_source: z.enum(["measured", "recent_renders", "default"]),
  queue: z.object({ queued: z.number(), rendering: z.number(), workers: z.number() }),
  /** Per output (one for a render without `outputs`): its frames and credits; `credits` is their sum. */
  outputs: z
    .array(z.object({ index: z.number().int(), frames: z.number().int(), credits: z.number() }))
    .default([]),
});
export type RenderQuote = z.infer<typeof renderQuoteSchema>;

/** A frame's cost when nothing is known: a 1080p frame of a moving composition on one core. */
export const DEFAULT_FRAME_COST: FrameCost = { msPerFrame: 120, startupMs: 1500 };
