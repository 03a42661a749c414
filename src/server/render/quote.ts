// POST /v3/svc/renders/quote: frames, credits and the estimated time of a render, before anything
// is uploaded or charged; with `outputs`, each output's frames and credits (their sum is the charge). Credits are the charge rule itself (shared/quote.ts -> creditsFor). The
// time is the queue ahead spread over the workers plus the render on one worker (each job renders
// with one browser), from the cost per frame the client measured on this composition when it
// sends one (engine/quote.ts), else from this service's recent renders, else a default.
import type { FastifyInstance } from "fastify";
import {
  DEFAULT_FRAME_COST,
  estimateOutputsSeconds,
  estimateQueueSeconds,
  framesOf,
  quoteOutputs,
  type FrameCost,
  type RenderQuote,
  type ServiceLoad,
} from "../../shared/quote";
import type { ServiceContext } from "../context";
import { countRunningRenders, loadRecentlyCompleted } from "./render-repository";
import { routeOf } from "../http/operations";
import type { ZodTypeProvider } from "../http/schema-compilers";

/** Renders the service's own history is averaged over. */
const RECENT_RENDERS = 20;

export function registerQuoteRoute(instance: FastifyInstance, ctx: ServiceContext): void {
  instance.withTypeProvider<ZodTypeProvider>().route({
    ...routeOf("quoteRender"),
    handler: async (request) => {
      const body = request.body;
      const frames = framesOf(body.duration, body.fps);
      const { load, recentMsPerFrame } = await serviceLoad(ctx);
      const measured = body.measured_ms_per_frame !== undefined;
      const cost: FrameCost = measured
        ? {
            msPerFrame: body.measured_ms_per_frame!,
            startupMs: body.measured_startup_ms ?? DEFAULT_FRAME_COST.startupMs,
          }
        : recentMsPerFrame !== undefined
          ? { msPerFrame: recentMsPerFrame, startupMs: 0 }
          : DEFAULT_FRAME_COST;
      const outputs = quoteOutputs(body, frames);
      const renderSeconds = estimateOutputsSeconds(
        cost,
        outputs.map((output) => output.frames),
        body.outputs ? load.workers : 1,
      );
      const queueSeconds = estimateQueueSeconds(load, renderSeconds);
      const quote: RenderQuote = {
        frames,
        duration: frames / body.fps,
        // The sum of the outputs' lines: what the render is charged (one output: creditsFor).
        credits: outputs.reduce((sum, output) => sum + output.credits, 0),
        estimated_queue_seconds: round(queueSeconds),
        estimated_render_seconds: round(renderSeconds),
        estimated_total_seconds: round(queueSeconds + renderSeconds),
        cost_source: measured
          ? "measured"
          : recentMsPerFrame !== undefined
            ? "recent_renders"
            : "default",
        queue: { queued: load.queued, rendering: load.rendering, workers: load.workers },
        outputs,
      };
      return { data: quote };
    },
  });
}

function round(seconds: number): number {
  return Math.round(seconds * 10) / 10;
}

/** The queue now, the workers, and what the recent renders cost per frame (start-up included). */
async function serviceLoad(
  ctx: ServiceContext,
): Promise<{ load: ServiceLoad; recentMsPerFrame: number | undefined }> {
  const running = await countRunningRenders(ctx.db);
  const recent = await loadRecentlyCompleted(ctx.db, RECENT_RENDERS);
  const timed = recent.filter(
    (row) => row.completed_ms !== null && row.started_ms !== null && (row.duration ?? 0) > 0,
  );
  const seconds = timed.map((row) => (row.completed_ms! - row.started_ms!) / 1000);
  const frames = timed.map((row) => framesOf(row.duration!, row.fps));
  const totalFrames = frames.reduce((a, b) => a + b, 0);
  const totalSeconds = seconds.reduce((a, b) => a + b, 0);
  return {
    load: {
      queued: running.queued,
      rendering: running.rendering,
      // An API-only process has no workers of its own; the queue is still served by one or more.
      workers: Math.max(1, ctx.config.jobs),
      recentRenderSeconds: timed.length > 0 ? totalSeconds / timed.length : undefined,
    },
    recentMsPerFrame: totalFrames > 0 ? (totalSeconds * 1000) / totalFrames : undefined,
  };
}
