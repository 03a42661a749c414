// The measured cost of a composition before it is rendered: one browser page is started as a
// render starts it, and eight short runs of consecutive frames, spread evenly over the whole
// timeline (the middle of each eighth, so still stretches count as much as they last), are drawn
// and read back as a render draws them, unchanged frames skipped alike. A run's first frame follows
// a jump and always draws, as the first frame of each of a render's segments does: the per-frame
// cost weighs the two by how many of the render's frames start a segment. That cost and the
// start-up time feed the estimate of shared/quote.ts. The 32 frames cost a few seconds of a 1080p
// render.
import { availableParallelism } from "node:os";
import { estimateRenderSeconds, framesOf, type FrameCost } from "../../shared/quote";
import { prepareRender, resolveWorkers } from "../stages/render-prepare";
import { withRenderRun, type PageInfo } from "../stages/render-run";
import type { RenderCompositionOptions } from "../types";
import { segmentLength } from "../stages/plan";

/** Where the sampled runs start (share of the timeline: the middle of each eighth) and their length. */
const SAMPLE_AT = Array.from({ length: 8 }, (_, run) => (run + 0.5) / 8);
const SAMPLE_RUN = 4;

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
  const request = {
    allowNetwork: options.allowNetwork,
    readyTimeoutSeconds: options.readyTimeoutSeconds,
    signal: options.signal,
  };
  return withRenderRun(prepared, request, async (run) => {
    const wanted = resolveWorkers(options.workers ?? Math.min(4, availableParallelism()), Infinity);
    const opening = run.openCapturePages(wanted);
    const first = await opening[0]!;
    const info = await first.evaluate<PageInfo>("window.__svc.info()");
    const frames = framesOf(info.duration, fps);
    const segments = Math.ceil(frames / segmentLength(frames, fps));
    const localWorkers = Math.min(wanted, segments);
    const pages = [first, ...(await Promise.all(opening.slice(1, localWorkers)))];
    const startupMs = performance.now() - started;
    // Timed: every frame of a run but its first, which follows a jump and always draws (a render
    // moves one frame at a time, and skips frames where nothing changed).
    let pageMs = 0;
    let jumpMs = 0;
    let timed = 0;
    let drawn = 0;
    await Promise.all(
      pages.map(async (page, worker) => {
        for (let sampleRun = worker; sampleRun < SAMPLE_AT.length; sampleRun += pages.length) {
          const share = SAMPLE_AT[sampleRun]!;
          const firstFrame = Math.min(Math.max(0, frames - SAMPLE_RUN), Math.floor(frames * share));
          for (let frame = firstFrame; frame < Math.min(frames, firstFrame + SAMPLE_RUN); frame++) {
            run.throwIfCancelled();
            const t0 = performance.now();
            await page.seek(frame / fps);
            await page.capture(frame !== firstFrame);
            drawn++;
            if (frame === firstFrame) {
              jumpMs += performance.now() - t0;
              continue;
            }
            pageMs += performance.now() - t0;
            timed++;
          }
        }
      }),
    );
    // A render draws `segments` frames after a jump (each segment's first) and steps to the rest;
    // a composition too short for a run of two frames: its jumps are all there is to time.
    const jumps = drawn - timed;
    const segmentStarts = Math.min(1, segments / Math.max(1, frames));
    const msPerFrame =
      timed > 0
        ? (pageMs / timed) * (1 - segmentStarts) + (jumpMs / Math.max(1, jumps)) * segmentStarts
        : jumpMs / drawn;
    // The pages drew side by side, so each one's time already includes sharing the cores.
    const wallMsPerFrame = msPerFrame / pages.length;
    const cost: FrameCost = { msPerFrame, startupMs };
    return {
      durationSeconds: frames / fps,
      frames,
      cost,
      sampledFrames: drawn,
      localWorkers,
      estimatedLocalSeconds: estimateRenderSeconds(
        { msPerFrame: wallMsPerFrame, startupMs },
        frames,
        1,
      ),
    };
  });
}
