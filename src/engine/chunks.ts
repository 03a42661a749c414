// Distributed rendering: one render cut into chunks that different machines render, then joined
// without re-encoding. A chunk is a run of the engine's own segments, so its boundaries depend
// only on the frame count, the fps and the chunk settings (never on which machine or how many),
// and the joined file holds exactly the frames a single-machine render encodes.
import { mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { muxOutput, extractThumbnail, type AudioInput } from "./encode";
import { resolveFfmpeg } from "./ffmpeg";
import { representativeFrame, segmentLength, type Chunk } from "./plan";
import { renderComposition } from "./render";
import type { RenderCompositionOptions, RenderResult } from "./types";
import type { OutputFormat } from "../shared/render-options";

export { planChunks, representativeFrame, type Chunk, type ChunkSettings } from "./plan";

export interface ChunkResult {
  segmentFiles: string[];
  /** Audio of the whole composition, with sources relative to the project folder. */
  audio: AudioInput[];
  /** The thumbnail, when this chunk holds the representative frame. */
  thumbnailPath: string | undefined;
  warnings: string[];
}

/** Renders one chunk into `outputDir` (encoded segments, and the thumbnail if it is here). */
export async function renderChunk(
  options: Omit<RenderCompositionOptions, "output" | "thumbnail"> & {
    chunk: Chunk;
    frames: number;
    outputDir: string;
  },
): Promise<ChunkResult> {
  const { chunk, frames, outputDir, ...renderOptions } = options;
  const fps = renderOptions.fps ?? 30;
  const format = renderOptions.format ?? "mp4";
  const result: RenderResult = await renderComposition(
    { ...renderOptions, output: join(outputDir, `unused.${format}`), thumbnail: false },
    {
      segments: {
        first: chunk.firstSegment,
        count: chunk.segmentCount,
        expectedFrames: frames,
        keepIn: outputDir,
      },
    },
  );
  const kept = result.chunk!;
  const frame = representativeFrame(frames);
  let thumbnailPath: string | undefined;
  if (frame >= chunk.firstFrame && frame < chunk.firstFrame + chunk.frameCount) {
    const length = segmentLength(frames, fps);
    const segment = kept.segmentFiles[Math.floor(frame / length) - chunk.firstSegment]!;
    thumbnailPath = join(outputDir, "thumbnail.jpg");
    const ffmpeg = await resolveFfmpeg();
    await extractThumbnail(
      ffmpeg.path,
      segment,
      (frame % length) / fps,
      thumbnailPath,
      renderOptions.signal,
    );
  }
  return {
    segmentFiles: kept.segmentFiles,
    audio: kept.audio,
    thumbnailPath,
    warnings: result.warnings,
  };
}

/** Joins the chunks' segments (in order) without re-encoding and mixes the audio once. */
export async function joinChunks(options: {
  segmentFiles: string[];
  output: string;
  format: OutputFormat;
  durationSeconds: number;
  audio: AudioInput[];
  signal?: AbortSignal;
}): Promise<void> {
  const ffmpeg = await resolveFfmpeg();
  const workDir = await mkdtemp(join(tmpdir(), "svc-join-"));
  const partial = join(dirname(options.output), `.${basename(options.output)}.partial`);
  try {
    await muxOutput({
      ffmpegPath: ffmpeg.path,
      segments: options.segmentFiles,
      output: partial,
      format: options.format,
      durationSeconds: options.durationSeconds,
      audio: options.audio,
      workDir,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    await rename(partial, options.output);
  } finally {
    await rm(partial, { force: true });
    await rm(workDir, { recursive: true, force: true });
  }
}
