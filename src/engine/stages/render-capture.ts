// Render stage 3, the capture loop: the pages step through their frames, each segment streaming
// into its own encoder. Workers (one page each) start on contiguous blocks of segments; one whose
// block is done takes half of the segments another has not started (stealSegments in plan.ts). A
// page that has to start after frame 0 — a worker's block, stolen segments, a chunk of a
// distributed render — is brought to its first frame by catchUp. A whole render and a chunk run
// this same loop; they differ only in which segments they capture.
import { join } from "node:path";
import type { CapturePage, CapturedFrame } from "../browser/capture";
import { SegmentEncoder, segmentExtension } from "../ffmpeg/encode";
import { cancelledError, EngineError } from "../errors";
import { pageFindings, withRefusedRequests } from "../browser/findings";
import { segmentLength, stealSegments, type SegmentRun } from "./plan";
import { resolveWorkers } from "./render-prepare";
import { pageError, type FrameSink, type PageInfo, type RenderRun } from "./render-run";
import type { RenderProgress } from "../types";
import { frameCount } from "../../shared/frames";
import { captureFrame } from "../capture/shader-frames";

/** Hooks for tests and bench/render.ts, which measure capture alone with the same pages. */
export interface CaptureHooks {
  sinkForSegment?: (segmentIndex: number) => FrameSink;
  /**
   * Send every frame's picture to the encoder even when nothing changed (default false). Output
   * is the same either way; tests and benchmarks compare the two.
   */
  noDedup?: boolean;
  /** The first block of segments of each worker (tests: an uneven start that forces stealing). */
  blocks?: (first: number, end: number, workers: number) => SegmentBlock[];
  /** "step": pages reach later frames by stepping through every frame (benches compare). */
  catchUp?: "jump" | "step";
  /** Called when a worker takes segments from another (tests and benchmarks count these). */
  onSteal?: (steal: { worker: number; first: number; end: number; relaunch: boolean }) => void;
}

/** Which segments to capture: all of them, or one chunk's run checked against its plan. */
export interface SegmentRange {
  first: number;
  count: number;
  /** The frame count the chunks were planned for; a page with another count is refused. */
  expectedFrames: number;
}

export interface CapturedSegments {
  frames: number;
  /** Segment length in frames. */
  length: number;
  firstSegment: number;
  endSegment: number;
  /** Encoded segment files by segment index (only [firstSegment, endSegment) exist). */
  segmentFiles: string[];
  framesCaptured: number;
  repeatedFrames: number;
  /** The pages, still open, for what the finish stage reads from them (media). */
  pages: CapturePage[];
  /** The next frame each page can draw without a catch-up. */
  nextFrames: number[];
  catchUp: CatchUpState;
}

export type ReportProgress = (progress: Omit<RenderProgress, "fps" | "etaSeconds">) => void;

export interface SegmentBlock {
  first: number;
  end: number;
}

/**
 * How many frames before its first one a worker draws (and throws away) when it starts mid-way.
 * Chromium's raster keeps state from earlier frames (tiles, caches), so the first frames a fresh
 * browser draws after a jump can differ by a few levels at edges from those of a browser that drew
 * every frame; measured on the examples, five frames of history were enough to match exactly.
 * State kept longer (a layer's raster scale since the intro) is dropped at every segment's first
 * frame instead, in every render (CapturePage.forgetRasterHistory).
 */
const PREROLL_FRAMES = 5;

/** Frames stepped per command when a page is stepped to a later frame (~1 s on a busy machine). */
const STEP_BATCH_FRAMES = 250;

/**
 * Opens the pages, reads the composition's length from the first, and captures the segments of
 * `range` (all of them without one) with up to `workers` pages. Warnings from the page and its
 * findings are added to `run.prepared.warnings`.
 */
export async function captureSegments(
  run: RenderRun,
  workers: number | "auto" | undefined,
  range: SegmentRange | undefined,
  report: ReportProgress,
  hooks: CaptureHooks = {},
): Promise<CapturedSegments> {
  const { fps, format, quality } = run.prepared.settings;
  const opening = run.openCapturePages(resolveWorkers(workers, Infinity));
  const first = await opening[0]!;
  const info = await readPageInfo(run, first);
  const frames = frameCount(info.duration, fps);
  if (frames < 1) {
    throw new EngineError(
      "composition_not_found",
      `The composition lasts ${info.duration} s, too short for one frame at ${fps} fps.`,
      "Set data-duration on the root.",
    );
  }
  if (range && range.expectedFrames !== frames) {
    throw new EngineError(
      "composition_changed",
      `The composition has ${frames} frames here, but its render was planned for ${range.expectedFrames}.`,
      "Give the root a data-duration that matches its timeline.",
    );
  }
  const length = segmentLength(frames, fps);
  const segmentCount = Math.ceil(frames / length);
  const firstSegment = range?.first ?? 0;
  const endSegment = range ? Math.min(segmentCount, range.first + range.count) : segmentCount;
  const workerCount = resolveWorkers(workers, endSegment - firstSegment);
  const segmentFiles = Array.from({ length: segmentCount }, (_, i) =>
    join(run.workDir, `segment-${String(i).padStart(5, "0")}.${segmentExtension(format)}`),
  );

  const framesTotal = Math.min(frames, endSegment * length) - firstSegment * length;
  let framesDone = 0;
  let repeatedFrames = 0;
  report({ framesDone, framesTotal, stage: "capturing" });
  const runs: SegmentRun[] = (hooks.blocks ?? contiguousBlocks)(
    firstSegment,
    endSegment,
    workerCount,
  ).map((block) => ({ next: block.first, end: block.end }));

  const catchUpState = newCatchUpState(hooks.catchUp !== "step");
  const nextFrames: number[] = [];
  const runWorker = async (worker: number): Promise<void> => {
    let session = pages[worker]!;
    // A finished segment's encoder drains (x264's lookahead, the muxer, process exit) while this
    // worker captures its next segment; waiting for it would leave the browser idle each time.
    const draining: Promise<void>[] = [];
    /** The next frame this worker's page can draw without a catch-up (a warm page: later). */
    let position = run.positionOf(session);
    const own = runs[worker]!;
    /** A fresh page in place of this worker's; the frame it starts at (0). */
    const relaunchPage = async (): Promise<number> => {
      session = await run.replacePage(session);
      pages[worker] = session;
      return 0;
    };
    for (;;) {
      if (own.next >= own.end) {
        if (!stealSegments(runs, worker)) break;
        const from = own.next * length;
        // Behind the page's position: scripts cannot be stepped backwards, so the stolen
        // segments get a fresh browser, which catches up exactly as a worker starting there.
        const relaunch = from < position;
        hooks.onSteal?.({ worker, first: own.next, end: own.end, relaunch });
        if (relaunch) position = await relaunchPage();
      }
      const index = own.next++;
      const start = index * length;
      const end = Math.min(frames, (index + 1) * length);
      // A page past this segment's start (a warm page): scripts cannot be stepped backwards.
      if (start < position) position = await relaunchPage();
      if (start !== position) {
        session = await reachFrame(run, session, position, start, catchUpState);
        pages[worker] = session;
      }
      const encoder = run.track(
        hooks.sinkForSegment?.(index) ??
          new SegmentEncoder({
            ffmpegPath: run.ffmpegPath,
            output: segmentFiles[index]!,
            frames: end - start,
            fps,
            format,
            quality,
            imageFormat: run.prepared.imageFormat,
            size: run.prepared.size,
          }),
      );
      try {
        for (let frame = start; frame < end; frame++) {
          run.throwIfCancelled();
          // Every page that starts at a segment (a worker's block, stolen segments, a chunk)
          // rasters its first frame as the page that drew every earlier frame does.
          if (frame === start) await session.forgetRasterHistory();
          const shot = await drawFrame(run, session, frame, !hooks.noDedup);
          // A segment starts with a picture; after that, an unchanged frame is a repeat.
          const repeat = !shot.changed && frame !== start && !hooks.noDedup;
          await encoder.write(repeat ? null : shot.image);
          if (repeat) repeatedFrames++;
          framesDone++;
          report({ framesDone, framesTotal, stage: "capturing" });
        }
      } catch (error) {
        run.stopEncoder(encoder);
        throw error;
      }
      position = end;
      const done = encoder.finish().finally(() => run.stopEncoder(encoder));
      done.catch(() => undefined); // surfaced by the Promise.all below
      draining.push(done);
    }
    await Promise.all(draining);
    nextFrames[worker] = position;
  };
  // A render too short for every worker: the browsers it does not need go now.
  for (const surplus of opening.slice(workerCount)) {
    void surplus.then((session) => session.close()).catch(() => undefined);
  }
  const pages = [first, ...(await Promise.all(opening.slice(1, workerCount)))];
  await Promise.all(pages.map((_, i) => runWorker(i)));

  await addFindingWarnings(run, pages);
  return {
    frames,
    length,
    firstSegment,
    endSegment,
    segmentFiles,
    framesCaptured: framesDone,
    repeatedFrames,
    pages,
    nextFrames,
    catchUp: catchUpState,
  };
}

/**
 * Segments [first, end) cut into one contiguous block per worker. A worker that only moves forward
 * one frame at a time shows what a single worker shows; every jump costs a catch-up (catchUp).
 */
export function contiguousBlocks(first: number, end: number, workers: number): SegmentBlock[] {
  const total = end - first;
  return Array.from({ length: workers }, (_, i) => ({
    first: first + Math.floor((total * i) / workers),
    end: first + Math.floor((total * (i + 1)) / workers),
  }));
}

// The steps a still (outputs/still.ts) takes too: one frame is drawn exactly as the loop draws it.

/** What the page runtime reports of the composition; its warnings become the render's. */
export async function readPageInfo(run: RenderRun, page: CapturePage): Promise<PageInfo> {
  const info = await page.evaluate<PageInfo>("window.__svc.info()");
  run.prepared.warnings.push(...info.warnings);
  return info;
}

/**
 * Brings `page`, which draws frame `from` next, to frame `to` (catchUp). Where the jump turned out
 * unfaithful, a fresh page takes its place and is stepped through every earlier frame instead.
 * Returns the page that is now at `to`.
 */
export async function reachFrame(
  run: RenderRun,
  page: CapturePage,
  from: number,
  to: number,
  state: CatchUpState,
): Promise<CapturePage> {
  const { fps } = run.prepared.settings;
  if (await catchUp(page, from, to, fps, run, state)) return page;
  const fresh = await run.replacePage(page);
  await catchUp(fresh, 0, to, fps, run, state);
  return fresh;
}

/**
 * Frame `frame` drawn and read back: the page seeked to its time, a page error surfaced, the
 * picture captured (blended inside a shader transition, capture/shader-frames.ts).
 */
export async function drawFrame(
  run: RenderRun,
  page: CapturePage,
  frame: number,
  skipUnchanged: boolean,
): Promise<CapturedFrame> {
  const { fps } = run.prepared.settings;
  await page.seek(frame / fps);
  if (run.pageErrors.length > 0) throw pageError(run.pageErrors);
  return captureFrame(page, frame, fps, skipUnchanged);
}

/**
 * What the pages did that svc may not render faithfully (runtime/diagnostics.ts), and the requests
 * the network policy refused, in words among the render's warnings (each once).
 */
export async function addFindingWarnings(run: RenderRun, pages: CapturePage[]): Promise<void> {
  const { warnings } = run.prepared;
  const findings = withRefusedRequests(await pageFindings(pages), run.blocked, run.refusalReasons);
  for (const finding of findings) {
    if (!warnings.includes(finding.message)) warnings.push(finding.message);
  }
}

/** How pages of one render reach a frame after 0: by jumping there, or by stepping every frame. */
export interface CatchUpState {
  /** Jump (SvcPage.jump) until the page or a jump says it cannot be done faithfully. */
  direct: boolean;
  /** Frames brought up to by a jump and by stepping, and the time it took, for logs and benches. */
  jumpedFrames: number;
  steppedFrames: number;
  ms: number;
}

/**
 * Brings a page that has drawn every frame before `fromFrame` (0: a freshly loaded page) to the
 * state it has after a render of every frame before `startFrame`. Page scripts keep state (GSAP
 * records a tween's start values when it first renders; rAF code counts frames), so the page jumps
 * (SvcPage.jump: its clock steps through every frame time, timelines and animations are set once),
 * or, where the page says a jump would not be faithful, is stepped through each frame time; then
 * the last PREROLL_FRAMES are drawn. False when the jump turned out unfaithful after the fact (an
 * animation that started in the skipped frames): the page must be replaced and stepped.
 */
async function catchUp(
  session: CapturePage,
  fromFrame: number,
  startFrame: number,
  fps: number,
  run: RenderRun,
  state: CatchUpState,
): Promise<boolean> {
  if (startFrame <= fromFrame) return true;
  const began = Date.now();
  const drawFrom = Math.max(fromFrame, startFrame - PREROLL_FRAMES);
  let jumped = false;
  if (state.direct && drawFrom > fromFrame) {
    const jump = await session.evaluate<{ jumped: boolean; reasons: string[] }>(
      `window.__svc.jump(${fromFrame}, ${drawFrom}, ${fps})`,
    );
    jumped = jump.jumped;
    if (!jumped) stepInstead(run, state, jump.reasons);
  }
  // In batches, so no one command runs long enough to look like a stalled browser (cdp.ts).
  for (let batch = fromFrame; !jumped && batch < drawFrom; batch += STEP_BATCH_FRAMES) {
    if (run.cancelled) throw cancelledError();
    const end = Math.min(drawFrom, batch + STEP_BATCH_FRAMES);
    await session.evaluate(
      `(async () => { for (let f = ${batch}; f < ${end}; f++) await window.__svc.seek(f / ${fps}); })()`,
    );
  }
  for (let frame = drawFrom; frame < startFrame; frame++) {
    if (run.cancelled) throw cancelledError();
    await session.seek(frame / fps);
    if (jumped && frame === drawFrom) {
      const problems = await session.evaluate<string[]>("window.__svc.jumpProblems()");
      if (problems.length > 0) {
        stepInstead(run, state, problems);
        state.ms += Date.now() - began;
        return false;
      }
    }
    await session.capture();
  }
  if (jumped) state.jumpedFrames += drawFrom - fromFrame;
  else state.steppedFrames += drawFrom - fromFrame;
  state.ms += Date.now() - began;
  return true;
}

/** A render's catch-up state before its first catch-up: jump while the page allows it. */
export function newCatchUpState(direct = true): CatchUpState {
  return { direct, jumpedFrames: 0, steppedFrames: 0, ms: 0 };
}

/** From now on this render steps its pages; the warning says why (once). */
function stepInstead(run: RenderRun, state: CatchUpState, reasons: string[]): void {
  if (!state.direct) return;
  state.direct = false;
  run.prepared.warnings.push(
    `the page could not jump straight to a later frame (${reasons.join("; ")}), so it was stepped through every earlier frame: correct, but slower for chunks that start late`,
  );
}

/** Progress to the caller's callback: capture progress at most every 100 ms, with a rate. */
export function progressWithRate(
  onProgress: ((progress: RenderProgress) => void) | undefined,
): ReportProgress {
  let lastSent = 0;
  let rateStart = Date.now();
  let rateFrames = 0;
  let fps = 0;
  return (progress) => {
    if (!onProgress) return;
    const now = Date.now();
    if (now - rateStart >= 1000) {
      fps = ((progress.framesDone - rateFrames) * 1000) / (now - rateStart);
      rateStart = now;
      rateFrames = progress.framesDone;
    }
    const finalFrame = progress.framesDone === progress.framesTotal;
    if (progress.stage === "capturing" && !finalFrame && now - lastSent < 100) return;
    lastSent = now;
    const etaSeconds = fps > 0 ? (progress.framesTotal - progress.framesDone) / fps : undefined;
    onProgress({ ...progress, fps, etaSeconds });
  };
}
