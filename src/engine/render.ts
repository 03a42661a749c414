// renderComposition: the engine's one entry point for a whole video, run as four stages that a
// chunk of a distributed render (chunks.ts) runs too: prepare (render-prepare.ts: options and
// project checked), the run (render-run.ts: project server, pages, encoders, one
// clean-up), the capture loop (render-capture.ts: frames into per-segment encoders, work stealing
// between pages) and finish (render-finish.ts: segments joined and audio mixed, thumbnail). The
// output is written under a temp name and renamed, and every temp file is removed whatever
// happens, so a failed or cancelled render leaves nothing behind.
import { randomBytes } from "node:crypto";
import { FILE_EXTENSIONS, type OutputFormat } from "../shared/render-options";
import { mkdir } from "node:fs/promises";
import { basename, dirname, extname, join, resolve } from "node:path";
import { captureSegments, progressWithRate, type CaptureHooks } from "./stages/render-capture";
import { finishWhole, pageAudio, removePartials, type OutputFiles } from "./stages/render-finish";
import { prepareRender } from "./stages/render-prepare";
import { writeCaptionFiles } from "./outputs/caption-files";
import { withRenderRun } from "./stages/render-run";
import { cancelledError } from "./errors";
import type { RenderCompositionOptions, RenderResult } from "./types";

export { segmentLength } from "./stages/plan";
export { contiguousBlocks, type SegmentBlock } from "./stages/render-capture";
export { resolveComposition, resolveWorkers } from "./stages/render-prepare";
export { waitUntilReady, type FrameSink } from "./stages/render-run";

/** Hooks for tests and bench/render.ts, which measure capture alone with the same pages. */
export interface RenderInternals extends CaptureHooks {
  /** Stop after capture: no joining, audio or thumbnail, and no output file. */
  captureOnly?: boolean;
  /** Extra Chromium flags, for experiments. */
  extraArgs?: string[];
}

export async function renderComposition(
  options: RenderCompositionOptions,
  internals: RenderInternals = {},
): Promise<RenderResult> {
  const { signal } = options;
  if (signal?.aborted) throw cancelledError();
  const prepared = await prepareRender(options);
  const { fps, format } = prepared.settings;
  const files = await outputFiles(options, format, prepared.warnings);
  const report = progressWithRate(options.onProgress);
  const request = {
    allowNetwork: options.allowNetwork,
    readyTimeoutSeconds: options.readyTimeoutSeconds,
    signal,
    ...(internals.extraArgs ? { extraArgs: internals.extraArgs } : {}),
  };
  try {
    return await withRenderRun(prepared, request, async (run) => {
      report({ framesDone: 0, framesTotal: 0, stage: "preparing" });
      const captured = await captureSegments(run, options.workers, undefined, report, internals);
      const result: RenderResult = {
        outputPath: files.outputPath,
        thumbnailPath: files.thumbnailPath,
        durationSeconds: captured.frames / fps,
        frames: captured.frames,
        repeatedFrames: captured.repeatedFrames,
        width: prepared.size.width,
        height: prepared.size.height,
        warnings: prepared.warnings,
      };
      if (run.libraries.size > 0) result.libraries = run.libraryList();
      if (internals.captureOnly) return { ...result, thumbnailPath: undefined };
      const framesTotal = captured.framesCaptured;
      report({ framesDone: framesTotal, framesTotal, stage: "finishing" });
      const audio = await pageAudio(run, captured.pages[0]!);
      await finishWhole(run, captured, audio, files, signal);
      if (options.captions?.softTrack || options.captions?.sidecar) {
        const sidecar = await writeCaptionFiles({
          ffmpegPath: run.ffmpegPath,
          video: files.outputPath,
          format,
          captions: options.captions,
          warnings: prepared.warnings,
          ...(signal ? { signal } : {}),
        });
        if (sidecar) result.captionsPath = sidecar;
      }
      return result;
    });
  } finally {
    await removePartials(files);
  }
}

/** The output path checked against the format, and the temp names it is written through. */
async function outputFiles(
  options: RenderCompositionOptions,
  format: string,
  warnings: string[],
): Promise<OutputFiles> {
  const outputPath = resolve(options.output);
  const expectedExtension = `.${FILE_EXTENSIONS[format as OutputFormat]}`;
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
  return {
    outputPath,
    partialOutput,
    thumbnailPath,
    partialThumbnail: thumbnailPath ? `${partialOutput}.jpg` : undefined,
  };
}
