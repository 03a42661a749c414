// Stills: one frame of a composition as PNG, JPEG or WebP (a poster, a thumbnail for a page). The
// frame is drawn exactly as in a video of the same fps, by the capture loop's own steps
// (render-capture.ts: reachFrame, drawFrame, shader transitions blended alike): the page is
// stepped through every earlier frame time (catchUp) and the time is rounded to a frame, so a
// still at 2.5 s is frame 75 of the 30 fps video. The page is read back as lossless PNG at the
// output size and encoded once; PNG and WebP keep transparency (the page is drawn on a
// transparent background, as for webm and mov), JPEG is drawn on the page's own background.
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { basename, dirname, extname, join, resolve } from "node:path";
import { cancelledError, EngineError } from "../errors";
import { runFfmpeg } from "../ffmpeg/encode";
import {
  addFindingWarnings,
  drawFrame,
  newCatchUpState,
  reachFrame,
  readPageInfo,
} from "../stages/render-capture";
import { prepareRender } from "../stages/render-prepare";
import { withRenderRun } from "../stages/render-run";
import type { RenderCompositionOptions } from "../types";
import type { StillFormat } from "../../shared/outputs";
import { frameCount } from "../../shared/frames";

export { STILL_FORMATS, type StillFormat } from "../../shared/outputs";

const STILL_EXTENSIONS: Record<string, StillFormat> = {
  ".png": "png",
  ".jpg": "jpeg",
  ".jpeg": "jpeg",
  ".webp": "webp",
};

export interface RenderStillOptions extends Omit<
  RenderCompositionOptions,
  "format" | "workers" | "thumbnail" | "onProgress"
> {
  /** Seconds into the composition; rounded to the nearest frame at `fps` (default 30). */
  time: number;
  /** Default: from the output's extension (.png, .jpg/.jpeg, .webp), else png. */
  stillFormat?: StillFormat;
}

export interface StillResult {
  outputPath: string;
  format: StillFormat;
  /** The frame drawn and its time (the requested time rounded to a frame). */
  frame: number;
  timeSeconds: number;
  width: number;
  height: number;
  warnings: string[];
}

/** The still's format: the one asked for, else the output's extension, else png. */
export function stillFormatFor(output: string, asked?: StillFormat): StillFormat {
  return asked ?? STILL_EXTENSIONS[extname(output).toLowerCase()] ?? "png";
}

/** FFmpeg's arguments that turn the captured PNG into the still at the output size. */
export function stillArgs(
  input: string,
  output: string,
  format: StillFormat,
  size: { width: number; height: number },
): string[] {
  const codec = {
    png: ["-c:v", "png", "-pix_fmt", "rgba"],
    jpeg: ["-c:v", "mjpeg", "-q:v", "2", "-pix_fmt", "yuvj444p"],
    webp: ["-c:v", "libwebp", "-quality", "90", "-pix_fmt", "yuva420p"],
  }[format];
  return [
    ...["-hide_banner", "-loglevel", "error", "-y", "-i", input],
    ...["-vf", `scale=${size.width}:${size.height}:flags=bicubic`, "-frames:v", "1"],
    ...codec,
    ...["-f", "image2", output],
  ];
}

export async function renderStill(options: RenderStillOptions): Promise<StillResult> {
  const { signal } = options;
  if (signal?.aborted) throw cancelledError();
  const outputPath = resolve(options.output);
  const format = stillFormatFor(outputPath, options.stillFormat);
  if (!Number.isFinite(options.time) || options.time < 0) {
    throw new EngineError(
      "invalid_options",
      `The still's time must be a number of seconds of at least 0, not ${String(options.time)}.`,
      "Give a time inside the composition, e.g. 2.5.",
      undefined,
      { option: "time" },
    );
  }
  // Drawn as the transparent formats are (PNG read-back) or as mp4 is (the page's background).
  const prepared = await prepareRender({
    ...options,
    format: format === "jpeg" ? "mp4" : "png-sequence",
  });
  const picture = { ...prepared, imageFormat: "png" as const };
  const { fps } = prepared.settings;
  const partial = join(
    dirname(outputPath),
    `.${basename(outputPath)}.${randomBytes(4).toString("hex")}.partial`,
  );
  const request = {
    allowNetwork: options.allowNetwork,
    readyTimeoutSeconds: options.readyTimeoutSeconds,
    signal,
  };
  try {
    return await withRenderRun(picture, request, async (run) => {
      let page = await run.openCapturePage();
      const info = await readPageInfo(run, page);
      const frames = Math.max(1, frameCount(info.duration, fps));
      if (options.time > info.duration + 1e-9) {
        throw new EngineError(
          "invalid_options",
          `The composition lasts ${info.duration} s; there is no frame at ${options.time} s.`,
          `Give a time from 0 to ${info.duration}.`,
          undefined,
          { option: "time" },
        );
      }
      const frame = Math.min(frames - 1, Math.round(options.time * fps));
      page = await reachFrame(run, page, 0, frame, newCatchUpState());
      const shot = await drawFrame(run, page, frame, false);
      await addFindingWarnings(run, [page]);
      run.throwIfCancelled();
      const captured = join(run.workDir, "still.png");
      await writeFile(captured, shot.image);
      await mkdir(dirname(outputPath), { recursive: true });
      await runFfmpeg(run.ffmpegPath, stillArgs(captured, partial, format, prepared.size), signal);
      run.throwIfCancelled();
      await rename(partial, outputPath);
      return {
        outputPath,
        format,
        frame,
        timeSeconds: frame / fps,
        width: prepared.size.width,
        height: prepared.size.height,
        warnings: prepared.warnings,
      };
    });
  } finally {
    await rm(partial, { force: true });
  }
}
