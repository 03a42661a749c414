// Captions beside the picture (issue 37): a sidecar `.srt`/`.vtt` next to the video, and a soft
// subtitle track viewers can turn on and off (mov_text in MP4/MOV, WebVTT in WebM), added by
// remuxing the finished file without re-encoding. Both are written through temp names and renamed,
// so the video and its sidecar are whole or absent. Picture formats (gif, png-sequence) have no
// subtitle track: a warning says so.
import { randomBytes } from "node:crypto";
import { rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { formatSrt, formatVtt } from "../../shared/captions";
import type { OutputFormat } from "../../shared/render-options";
import { runFfmpeg } from "../ffmpeg/encode";
import type { RenderCaptions } from "../types";

const SUBTITLE_CODECS: Partial<Record<OutputFormat, { codec: string; input: "srt" | "vtt" }>> = {
  mp4: { codec: "mov_text", input: "srt" },
  mov: { codec: "mov_text", input: "srt" },
  webm: { codec: "webvtt", input: "vtt" },
};

/** The sidecar's path: the video's name with .srt or .vtt. */
export function sidecarPath(videoPath: string, kind: "srt" | "vtt"): string {
  return videoPath.replace(/\.[^./\\]+$/, "") + `.${kind}`;
}

function temp(path: string): string {
  return join(dirname(path), `.${basename(path)}.${randomBytes(4).toString("hex")}.partial`);
}

/**
 * Adds the soft track to `video` (in place, through a temp file) and writes the sidecar; returns
 * the sidecar's path. `warnings` gets what could not be done for this format.
 */
export async function writeCaptionFiles(options: {
  ffmpegPath: string;
  video: string;
  format: OutputFormat;
  captions: RenderCaptions;
  warnings: string[];
  signal?: AbortSignal;
}): Promise<string | undefined> {
  const { captions, video, format } = options;
  const track = { cues: captions.cues };
  if (captions.softTrack) {
    const subtitle = SUBTITLE_CODECS[format];
    if (!subtitle) {
      options.warnings.push(
        `a ${format} file has no subtitle track; the captions track was left out`,
      );
    } else {
      const subtitles = `${temp(video)}.${subtitle.input}`;
      const remuxed = temp(video);
      try {
        await writeFile(subtitles, subtitle.input === "srt" ? formatSrt(track) : formatVtt(track));
        await runFfmpeg(
          options.ffmpegPath,
          [
            ...["-hide_banner", "-loglevel", "error", "-y", "-i", video, "-i", subtitles],
            ...["-map", "0", "-map", "1:0", "-c", "copy", "-c:s", subtitle.codec],
            ...["-metadata:s:s:0", "language=und", "-disposition:s:0", "0"],
            ...["-f", format === "webm" ? "webm" : format === "mov" ? "mov" : "mp4", remuxed],
          ],
          options.signal,
        );
        await rename(remuxed, video);
      } finally {
        await rm(subtitles, { force: true });
        await rm(remuxed, { force: true });
      }
    }
  }
  if (!captions.sidecar) return undefined;
  const path = sidecarPath(video, captions.sidecar);
  const partial = temp(path);
  try {
    await writeFile(partial, captions.sidecar === "srt" ? formatSrt(track) : formatVtt(track));
    await rename(partial, path);
  } finally {
    await rm(partial, { force: true });
  }
  return path;
}
