// One output of a render (issue 25): a video at its own format, resolution and aspect ratio, or a
// still at its time (still.ts). The one place that decides which: `svc render --also` and the
// service's output jobs both call renderOutput and read one kind of result, so neither branches on
// the kind to pick an engine function.
import type { ResolvedLibrary } from "../../node/index";
import type { OutputFileFormat, OutputKind, StillFormat } from "../../shared/outputs";
import type { OutputFormat } from "../../shared/render-options";
import { renderComposition } from "../render";
import type { RenderCompositionOptions } from "../types";
import { renderStill } from "./still";

/** Which file to make: a planned output's kind, format and, for a still, its time. */
export interface OutputFile {
  kind: OutputKind;
  /** mp4|webm|mov|gif|png-sequence for a video, png|jpeg|webp for a still. */
  format: OutputFileFormat;
  /** A still's time in seconds (null or absent: 0); a video ignores it. */
  time?: number | null | undefined;
}

/**
 * A render's options without its format, plus the file. A still takes no progress (one frame),
 * no workers and no thumbnail: with `thumbnail` it is its own.
 */
export interface RenderOutputOptions extends Omit<RenderCompositionOptions, "format"> {
  file: OutputFile;
}

/** What either kind of output wrote, in the terms both callers record. */
export interface OutputResult {
  kind: OutputKind;
  /** The format written (a still's from its extension when none was asked). */
  format: OutputFileFormat;
  outputPath: string;
  /** A video's JPEG thumbnail; a still's own file when a thumbnail was asked for. */
  thumbnailPath: string | undefined;
  width: number;
  height: number;
  /** A still's frame time (its time rounded to a frame); null for a video. */
  timeSeconds: number | null;
  /** A video's length; null for a still. */
  durationSeconds: number | null;
  warnings: string[];
  libraries?: ResolvedLibrary[];
}

export async function renderOutput(options: RenderOutputOptions): Promise<OutputResult> {
  const { file, workers, thumbnail, onProgress, ...common } = options;
  if (file.kind === "still") {
    const still = await renderStill({
      ...common,
      time: file.time ?? 0,
      stillFormat: file.format as StillFormat,
    });
    return {
      kind: "still",
      format: still.format,
      outputPath: still.outputPath,
      thumbnailPath: thumbnail ? still.outputPath : undefined,
      width: still.width,
      height: still.height,
      timeSeconds: still.timeSeconds,
      durationSeconds: null,
      warnings: still.warnings,
    };
  }
  const format = file.format as OutputFormat;
  const video = await renderComposition({ ...common, format, workers, thumbnail, onProgress });
  return {
    kind: "video",
    format: file.format,
    outputPath: video.outputPath,
    thumbnailPath: video.thumbnailPath,
    width: video.width,
    height: video.height,
    timeSeconds: null,
    durationSeconds: video.durationSeconds,
    warnings: video.warnings,
    ...(video.libraries ? { libraries: video.libraries } : {}),
  };
}
