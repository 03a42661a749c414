// Distributed rendering: one render cut into chunks that different machines render, then joined
// without re-encoding. A chunk is a run of the engine's own segments, so its boundaries depend
// only on the frame count, the fps and the chunk settings (never on which machine or how many),
// and the joined file holds exactly the frames a single-machine render encodes. A chunk runs the
// same stages as a whole render (render.ts); only its finish differs: it keeps its segments.
import { mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import type { AudioInput } from "./ffmpeg/encode";
import type { NetworkAccess } from "./browser/network";
import { writeCaptionFiles } from "./outputs/caption-files";
import { finishOutput } from "./outputs/pictures";
import { resolveFfmpeg, resolveMediaFfmpeg } from "./ffmpeg/ffmpeg";
import type { Chunk } from "./stages/plan";
import { captureSegments, progressWithRate } from "./stages/render-capture";
import { finishChunk, pageAudio } from "./stages/render-finish";
import { warmPages } from "./stages/page-pool";
import { prepareRender } from "./stages/render-prepare";
import { withRenderRun } from "./stages/render-run";
import { cancelledError } from "./errors";
import type { RenderCaptions, RenderCompositionOptions } from "./types";
import type { OutputFormat, Quality } from "../shared/render-options";
import type { ResolvedLibrary } from "../node/index";

export { planChunks, representativeFrame, type Chunk, type ChunkSettings } from "./stages/plan";
export { closeWarmPages } from "./stages/page-pool";
export { warmUp } from "./browser/spare-browser";

export interface ChunkResult {
  segmentFiles: string[];
  /** Audio of the whole composition: sources are absolute paths inside the project, or allowed URLs. */
  audio: AudioInput[];
  /** The thumbnail, when this chunk holds the representative frame. */
  thumbnailPath: string | undefined;
  warnings: string[];
  /**
   * The npm libraries that answered the page's CDN URLs while this chunk's page loaded (none when
   * it started from a warm page: the earlier chunk's page loaded them).
   */
  libraries?: ResolvedLibrary[];
  /**
   * How the page reached the chunk's first frame: "jump" straight there, "step" through every
   * earlier frame (a page that cannot be jumped faithfully, see SvcPage.jump), "none" (a chunk at
   * frame 0, or a warm page already there).
   */
  catchUp: { mode: "jump" | "step" | "none"; ms: number };
  /** The chunk started from a page an earlier chunk left open (warm). */
  warmPage: boolean;
}

export type RenderChunkOptions = Omit<RenderCompositionOptions, "output" | "thumbnail"> & {
  chunk: Chunk;
  /** The frame count the render's chunks were planned for; a page with another is refused. */
  frames: number;
  outputDir: string;
  /** "step": reach the first frame by stepping every earlier frame, as before jumps (benches). */
  catchUp?: "jump" | "step";
  /**
   * Keep the page open after the chunk for the next chunk of the same render in this process
   * (page-pool.ts), and start from such a page when one is there. Default false.
   */
  warm?: boolean;
};

/** Renders one chunk into `outputDir` (encoded segments, and the thumbnail if it is here). */
export async function renderChunk(options: RenderChunkOptions): Promise<ChunkResult> {
  const { chunk, frames, outputDir, signal } = options;
  if (signal?.aborted) throw cancelledError();
  const prepared = await prepareRender(options);
  const report = progressWithRate(options.onProgress);
  const request = {
    allowNetwork: options.allowNetwork,
    readyTimeoutSeconds: options.readyTimeoutSeconds,
    signal,
    ...(options.warm ? { pool: warmPages } : {}),
  };
  return withRenderRun(prepared, request, async (run) => {
    report({ framesDone: 0, framesTotal: 0, stage: "preparing" });
    const range = { first: chunk.firstSegment, count: chunk.segmentCount, expectedFrames: frames };
    const captured = await captureSegments(run, options.workers, range, report, {
      ...(options.catchUp ? { catchUp: options.catchUp } : {}),
    });
    const framesTotal = captured.framesCaptured;
    report({ framesDone: framesTotal, framesTotal, stage: "finishing" });
    const audio = await pageAudio(run, captured.pages[0]!);
    const kept = await finishChunk(run, captured, outputDir, signal);
    run.throwIfCancelled();
    if (options.warm) run.keepWarm(captured.pages[0]!, captured.nextFrames[0]!);
    const { steppedFrames, jumpedFrames, ms } = captured.catchUp;
    const mode = steppedFrames > 0 ? "step" : jumpedFrames > 0 ? "jump" : "none";
    return {
      ...kept,
      audio,
      warnings: prepared.warnings,
      ...(run.libraries.size > 0 ? { libraries: run.libraryList() } : {}),
      catchUp: { mode, ms },
      warmPage: run.warmStart,
    };
  });
}

export interface JoinChunksOptions {
  segmentFiles: string[];
  output: string;
  format: OutputFormat;
  /** The GIF's palette tier: the render's own (default standard). */
  quality?: Quality;
  durationSeconds: number;
  audio: AudioInput[];
  /** What the render's page could reach: audio URLs are downloaded only there (encode.ts). */
  allowNetwork: NetworkAccess;
  /**
   * The render's captions: with `softTrack`, the joined file gets its subtitle stream here, as a
   * whole render's does (the chunks only burn them in). Sidecars are a local render's.
   */
  captions?: RenderCaptions;
  signal?: AbortSignal;
}

/**
 * Joins the chunks' segments (in order) without re-encoding, mixes the audio once and adds the
 * captions' soft track when asked (never a sidecar: the service writes none); returns what could not be done (a format without subtitles).
 */
export async function joinChunks(options: JoinChunksOptions): Promise<{ warnings: string[] }> {
  const warnings: string[] = [];
  // The mix decodes customers' audio: a maintained FFmpeg then (resolveMediaFfmpeg).
  const ffmpeg = await (options.audio.length > 0 ? resolveMediaFfmpeg() : resolveFfmpeg());
  const workDir = await mkdtemp(join(tmpdir(), "svc-join-"));
  const partial = join(dirname(options.output), `.${basename(options.output)}.partial`);
  try {
    await finishOutput({
      ffmpegPath: ffmpeg.path,
      segments: options.segmentFiles,
      output: partial,
      format: options.format,
      ...(options.quality ? { quality: options.quality } : {}),
      durationSeconds: options.durationSeconds,
      audio: options.audio,
      allowNetwork: options.allowNetwork,
      workDir,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (options.captions?.softTrack) {
      await writeCaptionFiles({
        ffmpegPath: ffmpeg.path,
        video: partial,
        format: options.format,
        captions: options.captions,
        warnings,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    }
    await rename(partial, options.output);
    return { warnings };
  } finally {
    await rm(partial, { force: true });
    await rm(workDir, { recursive: true, force: true });
  }
}
