// The measured cost of a composition before it is rendered: one browser page is started as a
// render starts it, and a few short runs of consecutive frames (at 20%, 50% and 80% of the
// timeline) are drawn and read back as a render draws them, unchanged frames skipped alike. Their
// mean time per frame and the start-up time feed the estimate of shared/quote.ts. A sample of
// 12 frames costs about a second of a 1080p render.
import { availableParallelism } from "node:os";
import { estimateRenderSeconds, framesOf, type FrameCost } from "../shared/quote";
import { prepareRender, resolveWorkers } from "./render-prepare";
import { RenderSessions, type PageInfo } from "./render-sessions";
import type { RenderCompositionOptions } from "./types";
import { segmentLength } from "./plan";

/** Where the sampled runs start (share of the timeline) and how many frames each draws. */
const SAMPLE_AT = [0.1, 0.3, 0.5, 0.7, 0.9] as const;
const SAMPLE_RUN = 3;

export interface SampledCost {
  durationSeconds: number;
  frames: number;
  /** One page's cost (what a service job, one browser, pays). */
  cost: FrameCost;
  /** Frames drawn to measure it. */
  sampledFrames: number;
  /** The browser workers a local render would use, and its estimated seconds with them. */
  localWorkers: number;
  estimatedLocalSeconds: number;
}

/**
 * Samples with as many pages at once as a local render would use, so the figure includes how
 * the pages share this machine's cores with each other and with whatever else runs here.
 */
export async function sampleRenderCost(
  options: Omit<RenderCompositionOptions, "output" | "onProgress">,
): Promise<SampledCost> {
  const prepared = await prepareRender(options);
  const { fps } = prepared.settings;
  const started = performance.now();
  const run = await RenderSessions.start(prepared, {
    allowNetwork: options.allowNetwork ?? true,
    readyTimeoutSeconds: options.readyTimeoutSeconds ?? 30,
    signal: options.signal,
  });
  try {
    const wanted = resolveWorkers(options.workers ?? Math.min(4, availableParallelism()), Infinity);
    const opening = run.openSessions(wanted);
    const first = await opening[0]!;
    const info = await first.evaluate<PageInfo>("window.__svc.info()");
    const frames = framesOf(info.duration, fps);
    const segments = Math.ceil(frames / segmentLength(frames, fps));
    const localWorkers = Math.min(wanted, segments);
    const pages = [first, ...(await Promise.all(opening.slice(1, localWorkers)))];
    const startupMs = performance.now() - started;
    let pageMs = 0;
    let drawn = 0;
    const sampleStart = performance.now();
    await Promise.all(
      pages.map(async (page, worker) => {
        for (let sampleRun = worker; sampleRun < SAMPLE_AT.length; sampleRun += pages.length) {
          const share = SAMPLE_AT[sampleRun]!;
          const firstFrame = Math.min(Math.max(0, frames - SAMPLE_RUN), Math.floor(frames * share));
          for (let frame = firstFrame; frame < Math.min(frames, firstFrame + SAMPLE_RUN); frame++) {
            run.throwIfCancelled();
            const t0 = performance.now();
            await page.seek(frame / fps);
            // The first frame of a run follows a jump and always draws; the rest skip as a render does.
            await page.capture(frame !== firstFrame);
            pageMs += performance.now() - t0;
            drawn++;
          }
        }
      }),
    );
    const wallMsPerFrame = (performance.now() - sampleStart) / drawn;
    const cost: FrameCost = { msPerFrame: pageMs / drawn, startupMs };
    return {
      durationSeconds: frames / fps,
      frames,
      cost,
      sampledFrames: drawn,
      localWorkers,
      // The pages drew side by side: their wall time per frame already is the parallel rate.
      estimatedLocalSeconds: estimateRenderSeconds(
        { msPerFrame: wallMsPerFrame, startupMs },
        frames,
        1,
      ),
    };
  } catch (error) {
    throw run.failure(error);
  } finally {
    await run.close();
  }
}
