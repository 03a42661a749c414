// Render stage 4, finish: what happens after the last frame. A whole render joins its segments
// without re-encoding, mixes the audio the page declared into the same pass and cuts a thumbnail;
// a chunk of a distributed render keeps its encoded segments for the join (chunks.ts), and the
// chunk holding the representative frame cuts the thumbnail from its segment. Outputs are written
// under temp names and renamed, so a failed render leaves no half-written file.
import type { MediaSource } from "../runtime/types";
import { mkdir, rename, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import type { CapturePage } from "../browser/capture";
import { extractThumbnail, type AudioInput } from "../ffmpeg/encode";
import { resolveMediaFfmpeg } from "../ffmpeg/ffmpeg";
import { networkAllows } from "../browser/network";
import { finishOutput } from "../outputs/pictures";
import { representativeFrame } from "./plan";
import { resolveInsideRoot } from "../../node/index";
import type { CapturedSegments } from "./render-capture";
import type { RenderRun } from "./render-run";

/** The audio the page declares, as FFmpeg inputs; sources outside the project are left out. */
export async function pageAudio(run: RenderRun, page: CapturePage): Promise<AudioInput[]> {
  const media = await page.evaluate<MediaSource[]>("window.__svc.media()");
  const { origin } = run.server;
  const inputs: AudioInput[] = [];
  for (const item of media) {
    let source: string | undefined;
    if (item.src.startsWith(origin + "/")) {
      source = await resolveInsideRoot(run.prepared.root, new URL(item.src).pathname);
    } else if (networkAllows(run.allowNetwork, item.src)) {
      source = item.src;
    }
    if (!source) {
      run.prepared.warnings.push(`audio ${item.src} was left out: it is not a file in the project`);
      continue;
    }
    inputs.push({
      source,
      start: item.start,
      duration: item.duration,
      mediaStart: item.mediaStart,
      volume: item.volume,
      ...(item.rate !== undefined && item.rate !== 1 ? { rate: item.rate } : {}),
    });
  }
  return inputs;
}

/** Where a whole render writes: the output and its thumbnail, each through a temp name. */
export interface OutputFiles {
  outputPath: string;
  partialOutput: string;
  thumbnailPath: string | undefined;
  partialThumbnail: string | undefined;
}

/** The segments joined and the audio mixed into the output, then the thumbnail; renamed last. */
export async function finishWhole(
  run: RenderRun,
  captured: CapturedSegments,
  audio: AudioInput[],
  files: OutputFiles,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { fps, format, quality } = run.prepared.settings;
  const durationSeconds = captured.frames / fps;
  // The browsers quit while FFmpeg joins the segments; run.close() waits for them.
  run.closePages();
  // A picture format (gif, png-sequence) returns the joined frames to cut the thumbnail from.
  const pictures = await finishOutput({
    // Mixing the audio decodes customers' files: a maintained FFmpeg then (resolveMediaFfmpeg).
    ffmpegPath: audio.length > 0 ? (await resolveMediaFfmpeg()).path : run.ffmpegPath,
    segments: captured.segmentFiles,
    output: files.partialOutput,
    format,
    quality,
    durationSeconds,
    audio,
    allowNetwork: run.allowNetwork,
    workDir: run.workDir,
    ...(signal ? { signal } : {}),
  });
  if (files.partialThumbnail) {
    // The composition in full swing (40% in, after intros), cut at its frame's start as a chunk
    // does: a time inside the last frame would find none to cut (a one-frame render failed here).
    await extractThumbnail(
      run.ffmpegPath,
      pictures ?? files.partialOutput,
      representativeFrame(captured.frames) / fps,
      files.partialThumbnail,
      signal,
    );
  }
  run.throwIfCancelled();
  if (signal?.aborted) throw signal.reason;
  await rename(files.partialOutput, files.outputPath);
  if (files.partialThumbnail && files.thumbnailPath) {
    await rename(files.partialThumbnail, files.thumbnailPath);
  }
}

export async function removePartials(files: OutputFiles): Promise<void> {
  await rm(files.partialOutput, { force: true });
  if (files.partialThumbnail) await rm(files.partialThumbnail, { force: true });
}

/**
 * A chunk's segments moved into `outputDir`, and the thumbnail cut there when the representative
 * frame is one of this chunk's.
 */
export async function finishChunk(
  run: RenderRun,
  captured: CapturedSegments,
  outputDir: string,
  signal: AbortSignal | undefined,
): Promise<{ segmentFiles: string[]; thumbnailPath: string | undefined }> {
  const { fps } = run.prepared.settings;
  await mkdir(outputDir, { recursive: true });
  const kept: string[] = [];
  for (let index = captured.firstSegment; index < captured.endSegment; index++) {
    const target = join(outputDir, basename(captured.segmentFiles[index]!));
    await rename(captured.segmentFiles[index]!, target);
    kept.push(target);
  }
  const frame = representativeFrame(captured.frames);
  const segment = Math.floor(frame / captured.length);
  if (segment < captured.firstSegment || segment >= captured.endSegment) {
    return { segmentFiles: kept, thumbnailPath: undefined };
  }
  const thumbnailPath = join(outputDir, "thumbnail.jpg");
  await extractThumbnail(
    run.ffmpegPath,
    kept[segment - captured.firstSegment]!,
    (frame % captured.length) / fps,
    thumbnailPath,
    signal,
  );
  return { segmentFiles: kept, thumbnailPath };
}
