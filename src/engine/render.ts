// renderComposition: the engine's one entry point. Stages: check options and the project, start
// the project server and browsers, wait until the page is ready, capture frames in fixed segments
// (each worker starts on a block of them and, when done, takes half of the segments another has not
// started: stealSegments in plan.ts), encode each segment while capturing, then join the
// segments and mix audio into the output, and cut a thumbnail. The output is written under a temp
// name and renamed, and every temp file is removed whatever happens, so a failed or cancelled
// render leaves nothing behind.
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rename, rm, stat } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { basename, dirname, extname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { detectAspectRatio, scanCompositionHtml } from "../shared/composition-scan";
import {
  ALPHA_FORMATS,
  checkRenderOptions,
  outputSize,
  type AspectRatio,
} from "../shared/render-options";
import { formatVariableIssue, parseVariablesSchema, validateVariables } from "../shared/variables";
import { resolveChromium } from "./browser";
import { CaptureSession } from "./capture";
import { EngineError } from "./errors";
import {
  extractThumbnail,
  muxOutput,
  SegmentEncoder,
  segmentExtension,
  type AudioInput,
} from "./encode";
import { resolveFfmpeg } from "./ffmpeg";
import { pageFindings, withRefusedRequests } from "./findings";
import { resolveInsideRoot, startProjectServer, type ProjectServer } from "./project-server";
import { runtimeScript } from "./runtime-bundle";
import { segmentLength, stealSegments, type SegmentRun } from "./plan";

export { segmentLength } from "./plan";
import type { RenderCompositionOptions, RenderProgress, RenderResult } from "./types";

/**
 * JPEG quality of captured frames per tier; x264 re-encodes them, so near-lossless is enough.
 * draft keeps 92 too: at 80 the JPEG's block noise cost x264 more bits than it saved the browser
 * time, and cost the draft ~0.003 SSIM.
 */
const JPEG_QUALITY = { draft: 92, standard: 92, high: 100 } as const;

/**
 * Share of the output size a frame is drawn at, per tier. A draft is a preview: the page is drawn
 * at 3/4 of the output size (1440x810 for 1080p, 56% of the pixels) and FFmpeg scales it up, as
 * a video editor's draft quality does. Chromium's software raster, compositing, read-back and
 * JPEG encoding all cost by the pixel, so a draft frame takes ~40% less CPU; layout and timing
 * do not change, only sharpness (SSIM ~0.99 against the full-size frame on the examples).
 */
const CAPTURE_SCALE = { draft: 0.75, standard: 1, high: 1 } as const;

interface PageInfo {
  compositionId: string;
  width: number;
  height: number;
  duration: number;
  warnings: string[];
}

interface PageMedia {
  kind: "audio" | "video";
  src: string;
  start: number;
  duration: number | null;
  mediaStart: number;
  volume: number;
}

export function resolveWorkers(workers: number | "auto" | undefined, segments: number): number {
  const wanted =
    workers === undefined ? 1 : workers === "auto" ? Math.min(4, availableParallelism()) : workers;
  if (!Number.isInteger(wanted) || wanted < 1) {
    throw new EngineError(
      "invalid_options",
      `workers must be a whole number of at least 1 or "auto", not ${String(workers)}.`,
      'Use 2 workers, or "auto".',
      undefined,
      { option: "workers" },
    );
  }
  return Math.max(1, Math.min(wanted, segments));
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw cancelledError();
}

export async function resolveComposition(
  projectDir: string,
  composition: string,
): Promise<{ root: string; entryPath: string; urlPath: string }> {
  const root = resolve(projectDir);
  const rootInfo = await stat(root).catch(() => undefined);
  if (!rootInfo?.isDirectory()) {
    throw new EngineError(
      "composition_not_found",
      `The project folder ${projectDir} does not exist.`,
      "Pass the folder that holds index.html.",
    );
  }
  const { realpath } = await import("node:fs/promises");
  const realRoot = await realpath(root);
  const urlPath = "/" + composition.replace(/\\/g, "/").replace(/^\/+/, "");
  const entryPath = await resolveInsideRoot(realRoot, urlPath);
  const entryInfo = entryPath ? await stat(entryPath).catch(() => undefined) : undefined;
  if (!entryPath || !entryInfo?.isFile()) {
    throw new EngineError(
      "composition_not_found",
      `The entry file ${composition} was not found in ${projectDir}.`,
      composition === "index.html"
        ? "Add an index.html to the project folder, or name another entry file."
        : "The composition is a path relative to the project folder, and must stay inside it.",
      undefined,
      { composition },
    );
  }
  return { root: realRoot, entryPath, urlPath };
}

/**
 * Where captured frames of one segment go; the encoder normally, a counter in benchmarks. A null
 * frame repeats the previous picture (nothing changed on screen).
 */
export interface FrameSink {
  write(frame: Buffer | null): Promise<void>;
  finish(): Promise<void>;
  /** Stops at once; a returned promise resolves when the sink's process has exited. */
  kill(): void | Promise<void>;
}

/** Hooks for bench/render.ts, which measures capture alone with the same pages and workers. */
export interface RenderInternals {
  sinkForSegment?: (segmentIndex: number) => FrameSink;
  /** Stop after capture: no joining, audio or thumbnail, and no output file. */
  captureOnly?: boolean;
  /** Extra Chromium flags, for experiments. */
  extraArgs?: string[];
  /**
   * One chunk of a distributed render (chunks.ts): capture only these segments, check that the
   * page has the frame count the chunks were planned for, and keep the encoded segments in
   * `keepIn` instead of joining them (no output file, no thumbnail).
   */
  segments?: { first: number; count: number; expectedFrames: number; keepIn: string };
  /**
   * Send every frame's picture to the encoder even when nothing changed (default false). Output
   * is the same either way; tests and benchmarks compare the two.
   */
  noDedup?: boolean;
  /** The first block of segments of each worker (tests: an uneven start that forces stealing). */
  blocks?: (first: number, end: number, workers: number) => SegmentBlock[];
  /** Called when a worker takes segments from another (tests and benchmarks count these). */
  onSteal?: (steal: { worker: number; first: number; end: number; relaunch: boolean }) => void;
}

export async function renderComposition(
  options: RenderCompositionOptions,
  internals: RenderInternals = {},
): Promise<RenderResult> {
  const { signal } = options;
  throwIfAborted(signal);
  const checked = checkRenderOptions(options);
  if (!checked.ok) {
    throw new EngineError(
      "invalid_options",
      `Invalid ${checked.problem.param}: ${checked.problem.message}`,
      hintForOption(checked.problem.param),
      undefined,
      { option: checked.problem.param },
    );
  }
  const { fps, quality, format, resolution } = checked.options;
  const warnings: string[] = [];

  const { root, entryPath, urlPath } = await resolveComposition(
    options.projectDir,
    options.composition ?? "index.html",
  );
  const scanned = scanCompositionHtml(await readFile(entryPath, "utf8"));
  if (!scanned.ok) throw new EngineError("composition_not_found", scanned.message, scanned.hint);
  const scan = scanned.scan;

  const detected = detectAspectRatio(scan.width, scan.height);
  const aspectRatio: AspectRatio | undefined = options.aspectRatio ?? detected;
  if (!aspectRatio || (options.aspectRatio && detected !== options.aspectRatio)) {
    throw new EngineError(
      "aspect_mismatch",
      options.aspectRatio
        ? `The composition is ${scan.width}x${scan.height}, which is not ${options.aspectRatio}.`
        : `The composition is ${scan.width}x${scan.height}, which matches none of 16:9, 9:16 or 1:1.`,
      options.aspectRatio
        ? `Let the aspect ratio be detected from the composition${detected ? ` (${detected})` : ""}, or change data-width/data-height.`
        : "Set data-width/data-height to 1920x1080, 1080x1920 or 1080x1080.",
      undefined,
      {
        ...(options.aspectRatio ? { requested: options.aspectRatio } : {}),
        ...(detected ? { detected } : {}),
      },
    );
  }

  const schema = parseVariablesSchema(scan.variablesJson);
  for (const error of schema.errors) warnings.push(`variables schema: ${error}`);
  const values = options.variables ?? {};
  const issues = validateVariables(schema.variables, values);
  if (issues.length > 0) {
    if (options.strictVariables) {
      throw new EngineError(
        "invalid_variables",
        `The variables do not match the composition's schema: ${issues.map(formatVariableIssue).join("; ")}`,
        "Fix the values, or turn strict variables off to render with warnings.",
        issues,
      );
    }
    for (const issue of issues) warnings.push(`variable ${formatVariableIssue(issue)}`);
  }

  const size = outputSize(aspectRatio, resolution);
  const deviceScaleFactor = (size.width / scan.width) * CAPTURE_SCALE[quality];
  const transparent = ALPHA_FORMATS.includes(format);
  const imageFormat = transparent ? "png" : "jpeg";

  const outputPath = resolve(options.output);
  const expectedExtension = `.${format}`;
  if (extname(outputPath).toLowerCase() !== expectedExtension) {
    warnings.push(
      `the output ${basename(outputPath)} does not end in ${expectedExtension}; it holds ${format} data`,
    );
  }
  await mkdir(dirname(outputPath), { recursive: true });
  const token = randomBytes(4).toString("hex");
  const partialOutput = join(dirname(outputPath), `.${basename(outputPath)}.${token}.partial`);
  const thumbnailPath =
    options.thumbnail === false
      ? undefined
      : outputPath.replace(/\.[^./\\]+$/, "") + ".thumbnail.jpg";
  const partialThumbnail = thumbnailPath ? `${partialOutput}.jpg` : undefined;

  const [ffmpeg, browser] = await Promise.all([resolveFfmpeg(), resolveChromium()]);
  throwIfAborted(signal);

  const workDir = await mkdtemp(join(tmpdir(), "svc-render-"));
  const sessions: CaptureSession[] = [];
  const encoders = new Set<FrameSink>();
  /** Encoders being stopped: the render returns only once their processes have exited. */
  const stopping: Promise<void>[] = [];
  const stopEncoder = (encoder: FrameSink): void => {
    encoders.delete(encoder);
    stopping.push(Promise.resolve(encoder.kill()));
  };
  let server: ProjectServer | undefined;
  const pageErrors: string[] = [];
  let cancelled = false;
  const onAbort = () => {
    cancelled = true;
    for (const encoder of encoders) stopEncoder(encoder);
    for (const session of sessions) void session.close();
  };
  signal?.addEventListener("abort", onAbort, { once: true });

  const report = progressReporter(options.onProgress);
  try {
    report({ framesDone: 0, framesTotal: 0, stage: "preparing" });
    // Built while the browsers start (esbuild, once per process); each page awaits it.
    const initScript = runtimeScript({ variables: values });
    initScript.catch(() => undefined); // surfaced by the sessions that await it
    server = await startProjectServer(root);
    const readyTimeoutMs = (options.readyTimeoutSeconds ?? 30) * 1000;
    const blocked = new Set<string>();
    const openSession = async (): Promise<CaptureSession> => {
      const session = await CaptureSession.open({
        browser,
        viewport: { width: scan.width, height: scan.height },
        deviceScaleFactor,
        transparent,
        imageFormat,
        jpegQuality: JPEG_QUALITY[quality],
        initScript,
        projectOrigin: server!.origin,
        allowNetwork: options.allowNetwork ?? true,
        onPageError: (message) => pageErrors.push(message),
        onBlockedRequest: (url) => blocked.add(url),
        ...(internals.extraArgs ? { extraArgs: internals.extraArgs } : {}),
      });
      sessions.push(session);
      if (cancelled) throw cancelledError();
      await session.load(server!.origin + urlPath, readyTimeoutMs);
      await waitUntilReady(session, readyTimeoutMs, pageErrors);
      return session;
    };

    // Every worker's browser starts at once: launching and loading a page is mostly waiting on
    // one process at a time, so starting them one after the other leaves a core idle.
    const opening = Array.from({ length: resolveWorkers(options.workers, Infinity) }, () =>
      openSession(),
    );
    for (const pending of opening) pending.catch(() => undefined); // awaited below
    const first = await opening[0]!;
    const info = await first.evaluate<PageInfo>("window.__svc.info()");
    warnings.push(...info.warnings);
    const frames = Math.round(info.duration * fps);
    if (frames < 1) {
      throw new EngineError(
        "composition_not_found",
        `The composition lasts ${info.duration} s, too short for one frame at ${fps} fps.`,
        "Set data-duration on the root.",
      );
    }
    const length = segmentLength(frames, fps);
    const segmentCount = Math.ceil(frames / length);
    const range = internals.segments;
    if (range && range.expectedFrames !== frames) {
      throw new EngineError(
        "composition_changed",
        `The composition has ${frames} frames here, but its render was planned for ${range.expectedFrames}.`,
        "Give the root a data-duration that matches its timeline.",
      );
    }
    const firstSegment = range?.first ?? 0;
    const endSegment = range ? Math.min(segmentCount, range.first + range.count) : segmentCount;
    const workerCount = resolveWorkers(options.workers, endSegment - firstSegment);
    const segments = Array.from({ length: segmentCount }, (_, i) =>
      join(workDir, `segment-${String(i).padStart(5, "0")}.${segmentExtension(format)}`),
    );

    const framesInRange = Math.min(frames, endSegment * length) - firstSegment * length;
    let framesDone = 0;
    let repeatedFrames = 0;
    report({ framesDone, framesTotal: framesInRange, stage: "capturing" });
    const runs: SegmentRun[] = (internals.blocks ?? contiguousBlocks)(
      firstSegment,
      endSegment,
      workerCount,
    ).map((block) => ({ next: block.first, end: block.end }));
    const runWorker = async (worker: number, firstSession: CaptureSession): Promise<void> => {
      let session = firstSession;
      // A finished segment's encoder drains (x264's lookahead, the muxer, process exit) while this
      // worker captures its next segment; waiting for it would leave the browser idle each time.
      const draining: Promise<void>[] = [];
      /** The next frame this worker's page can draw without a catch-up. */
      let position = 0;
      const run = runs[worker]!;
      for (;;) {
        if (run.next >= run.end) {
          if (!stealSegments(runs, worker)) break;
          const from = run.next * length;
          // Behind the page's position: scripts cannot be stepped backwards, so the stolen
          // segments get a fresh browser, which catches up exactly as a worker starting there.
          const relaunch = from < position;
          internals.onSteal?.({
            worker,
            first: run.next,
            end: run.end,
            relaunch,
          });
          if (relaunch) {
            const stale = session;
            session = await openSession();
            live[worker] = session;
            void stale.close();
            position = 0;
          }
        }
        const index = run.next++;
        const start = index * length;
        const end = Math.min(frames, (index + 1) * length);
        if (start !== position) await catchUp(session, position, start, fps, () => cancelled);
        const encoder =
          internals.sinkForSegment?.(index) ??
          new SegmentEncoder({
            ffmpegPath: ffmpeg.path,
            output: segments[index]!,
            frames: end - start,
            fps,
            format,
            quality,
            imageFormat,
            size,
          });
        encoders.add(encoder);
        try {
          for (let frame = start; frame < end; frame++) {
            if (cancelled) throw cancelledError();
            await session.seek(frame / fps);
            if (pageErrors.length > 0) throw pageError(pageErrors);
            const shot = await session.capture(!internals.noDedup);
            // A segment starts with a picture; after that, an unchanged frame is a repeat.
            const repeat = !shot.changed && frame !== start && !internals.noDedup;
            await encoder.write(repeat ? null : shot.image);
            if (repeat) repeatedFrames++;
            framesDone++;
            report({ framesDone, framesTotal: framesInRange, stage: "capturing" });
          }
        } catch (error) {
          stopEncoder(encoder);
          throw error;
        }
        position = end;
        const done = encoder.finish().finally(() => stopEncoder(encoder));
        done.catch(() => undefined); // surfaced by the Promise.all below
        draining.push(done);
      }
      await Promise.all(draining);
    };
    // A render too short for every worker: the browsers it does not need go now.
    for (const surplus of opening.slice(workerCount)) {
      void surplus.then((session) => session.close()).catch(() => undefined);
    }
    const extra = await Promise.all(opening.slice(1, workerCount));
    const live = [first, ...extra];
    await Promise.all(live.map((session, i) => runWorker(i, session)));

    // What the pages did that svc may not render faithfully (runtime/diagnostics.ts), in words.
    for (const finding of withRefusedRequests(await pageFindings(live), blocked)) {
      if (!warnings.includes(finding.message)) warnings.push(finding.message);
    }

    const result: RenderResult = {
      outputPath,
      thumbnailPath,
      durationSeconds: frames / fps,
      frames,
      repeatedFrames,
      width: size.width,
      height: size.height,
      warnings,
    };
    if (internals.captureOnly) return { ...result, thumbnailPath: undefined };
    report({ framesDone, framesTotal: framesInRange, stage: "finishing" });
    const media = await live[0]!.evaluate<PageMedia[]>("window.__svc.media()");
    const audio = await audioInputs(
      media,
      server.origin,
      root,
      options.allowNetwork ?? true,
      warnings,
    );
    if (range) {
      const kept: string[] = [];
      for (let index = firstSegment; index < endSegment; index++) {
        const target = join(range.keepIn, basename(segments[index]!));
        await rename(segments[index]!, target);
        kept.push(target);
      }
      return { ...result, thumbnailPath: undefined, chunk: { segmentFiles: kept, audio } };
    }
    // The browsers quit while FFmpeg joins the segments; `finally` waits for them.
    for (const session of sessions) void session.close();
    await muxOutput({
      ffmpegPath: ffmpeg.path,
      segments,
      output: partialOutput,
      format,
      durationSeconds: frames / fps,
      audio,
      workDir,
      ...(signal ? { signal } : {}),
    });
    if (partialThumbnail) {
      await extractThumbnail(
        ffmpeg.path,
        partialOutput,
        representativeTime(frames / fps),
        partialThumbnail,
        signal,
      );
    }
    throwIfAborted(signal);
    await rename(partialOutput, outputPath);
    if (partialThumbnail && thumbnailPath) await rename(partialThumbnail, thumbnailPath);
    return result;
  } catch (error) {
    if (cancelled || signal?.aborted) throw cancelledError();
    if (pageErrors.length > 0 && !(error instanceof EngineError && error.code === "page_error"))
      throw pageError(pageErrors);
    throw error;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    // Waited for, so no FFmpeg outlives the render, not even as an unreaped zombie.
    for (const encoder of encoders) stopEncoder(encoder);
    await Promise.all([...stopping, ...sessions.map((session) => session.close())]);
    await server?.close();
    await rm(workDir, { recursive: true, force: true });
    await rm(partialOutput, { force: true });
    if (partialThumbnail) await rm(partialThumbnail, { force: true });
  }
}

/**
 * How many frames before its first one a worker draws (and throws away) when it starts mid-way.
 * Chromium's raster keeps state from earlier frames (tiles, caches), so the first frames a fresh
 * browser draws after a jump can differ by a few levels at edges from those of a browser that drew
 * every frame; measured on the examples, five frames of history were enough to match exactly.
 */
const PREROLL_FRAMES = 5;

export interface SegmentBlock {
  first: number;
  end: number;
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

/**
 * Brings a page that has drawn every frame before `fromFrame` (0: a freshly loaded page) to the
 * state it has after a render of every frame before `startFrame`: page scripts are stepped through
 * each frame time in between (GSAP records a tween's start values when it first renders, so a
 * timeline jumped to frame n can differ from one stepped to it), and the last PREROLL_FRAMES are
 * drawn too.
 */
async function catchUp(
  session: CaptureSession,
  fromFrame: number,
  startFrame: number,
  fps: number,
  cancelled: () => boolean,
): Promise<void> {
  if (startFrame <= fromFrame) return;
  const drawFrom = Math.max(fromFrame, startFrame - PREROLL_FRAMES);
  await session.evaluate(
    `(async () => { for (let f = ${fromFrame}; f < ${drawFrom}; f++) await window.__svc.seek(f / ${fps}); })()`,
  );
  for (let frame = drawFrom; frame < startFrame; frame++) {
    if (cancelled()) throw cancelledError();
    await session.seek(frame / fps);
    await session.capture();
  }
}

function cancelledError(): EngineError {
  return new EngineError("cancelled", "The render was cancelled.", "Start the render again.");
}

function hintForOption(param: string): string {
  if (param === "fps") return "Use a whole number of frames per second from 1 to 240, e.g. 30.";
  if (param === "format") return "Render 4k as mp4, or use 1080p for webm/mov (alpha).";
  return `Check the value of ${param}.`;
}

function pageError(messages: string[]): EngineError {
  return new EngineError(
    "page_error",
    `The composition's script threw: ${messages[0]}`,
    "Open the composition in a browser, fix the error shown in the console, and render again.",
    messages,
  );
}

/** A frame that shows the composition in full swing: 40% in, after intros, before outros. */
function representativeTime(durationSeconds: number): number {
  return durationSeconds * 0.4;
}

/** How often the page is asked whether it is ready (fonts, images, media) before the first frame. */
const READY_POLL_MS = 50;

export async function waitUntilReady(
  session: CaptureSession,
  timeoutMs: number,
  pageErrors: string[],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (pageErrors.length > 0) throw pageError(pageErrors);
    const state = await session.evaluate<{
      ready: boolean;
      error?: string;
      waitingFor: string[];
    } | null>(
      "window.__svc ? { ready: !!window.__svc.ready, error: window.__svc.error, waitingFor: window.__svc.waitingFor || [] } : null",
    );
    if (state?.error) {
      throw new EngineError("page_error", state.error, "Fix the composition and render again.");
    }
    if (state?.ready) return;
    if (Date.now() > deadline) {
      const what = state?.waitingFor.length
        ? state.waitingFor.join(", ")
        : "the page runtime to start";
      throw new EngineError(
        "timeout",
        `Timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}.`,
        "Check that these files exist in the project and load in a browser, or raise the ready timeout.",
      );
    }
    await sleep(READY_POLL_MS);
  }
}

async function audioInputs(
  media: PageMedia[],
  origin: string,
  root: string,
  allowNetwork: boolean,
  warnings: string[],
): Promise<AudioInput[]> {
  const inputs: AudioInput[] = [];
  for (const item of media) {
    let source: string | undefined;
    if (item.src.startsWith(origin + "/")) {
      source = await resolveInsideRoot(root, new URL(item.src).pathname);
    } else if (allowNetwork && /^https?:\/\//.test(item.src)) {
      source = item.src;
    }
    if (!source) {
      warnings.push(`audio ${item.src} was left out: it is not a file in the project`);
      continue;
    }
    inputs.push({
      source,
      start: item.start,
      duration: item.duration,
      mediaStart: item.mediaStart,
      volume: item.volume,
    });
  }
  return inputs;
}

function progressReporter(onProgress: RenderCompositionOptions["onProgress"]) {
  let lastSent = 0;
  let rateStart = Date.now();
  let rateFrames = 0;
  let fps = 0;
  return (progress: Omit<RenderProgress, "fps" | "etaSeconds">): void => {
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
