// Picture outputs: the formats made from a render's frames rather than encoded as a video (gif,
// png-sequence). The segments are lossless (encode.ts), joined once here, and the joined video is
// turned into the output; it stays in the work dir so the thumbnail is cut from the full-colour
// frames, not from the GIF's palette or a zip.
import type { Quality } from "../../shared/render-options";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { muxOutput, runFfmpeg, type MuxOptions } from "../ffmpeg/encode";
import { writeGif } from "./gif";
import { writePngSequence } from "./png-sequence";

export interface PictureOutputOptions {
  ffmpegPath: string;
  segments: string[];
  output: string;
  format: "gif" | "png-sequence";
  workDir: string;
  /** The GIF's palette and dithering (default standard). */
  quality?: Quality;
  signal?: AbortSignal;
}

/**
 * The last step of every render: a video's segments joined with its audio (encode.ts muxOutput),
 * or a picture format written from the joined frames (which have no audio). Returns the video the
 * thumbnail is cut from when it is not the output itself.
 */
export async function finishOutput(
  options: MuxOptions & { quality?: Quality },
): Promise<string | undefined> {
  const { format } = options;
  if (format !== "gif" && format !== "png-sequence") {
    await muxOutput(options);
    return undefined;
  }
  return writePictureOutput({ ...options, format });
}

/** Writes the output; returns the joined video (in workDir) the thumbnail can be cut from. */
export async function writePictureOutput(options: PictureOutputOptions): Promise<string> {
  const joined = await joinSegments(options);
  if (options.format === "gif") {
    await writeGif({ ...options, input: joined });
  } else {
    await writePngSequence({ ...options, input: joined });
  }
  return joined;
}

/** The segments joined without re-encoding into one video in `workDir` (no audio). */
async function joinSegments(options: {
  ffmpegPath: string;
  segments: string[];
  workDir: string;
  signal?: AbortSignal;
}): Promise<string> {
  const listFile = join(options.workDir, "pictures.txt");
  const joined = join(options.workDir, "joined.mov");
  await writeFile(
    listFile,
    options.segments.map((s) => `file '${s.replace(/'/g, "'\\''")}'`).join("\n") + "\n",
  );
  try {
    await runFfmpeg(
      options.ffmpegPath,
      [
        ...["-hide_banner", "-loglevel", "error", "-y", "-f", "concat", "-safe", "0"],
        ...["-i", listFile, "-map", "0:v", "-c:v", "copy", "-f", "mov", joined],
      ],
      options.signal,
    );
  } finally {
    await rm(listFile, { force: true });
  }
  return joined;
}
