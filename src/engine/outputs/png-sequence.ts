// PNG sequence output: a zip of one RGBA PNG per frame, `frame_00000.png` for the frame at 0 s,
// `frame_00001.png` at 1/fps s and so on (at least five digits, more for longer renders), the
// layout editing and compositing programs import as an image sequence. Transparency is kept: the
// page is captured on a transparent background as for webm and mov. PNGs are already compressed,
// so the zip stores them as they are.
import { createWriteStream } from "node:fs";
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createZip, FIXED_ZIP_DATE } from "../../node/index";
import { runFfmpeg } from "../ffmpeg/encode";

/** Digits of a frame number: five, or as many as the last frame needs. */
export function frameDigits(frames: number): number {
  return Math.max(5, String(Math.max(0, frames - 1)).length);
}

export async function writePngSequence(options: {
  ffmpegPath: string;
  /** The render's frames as one video, with alpha. */
  input: string;
  output: string;
  workDir: string;
  signal?: AbortSignal;
}): Promise<void> {
  const framesDir = join(options.workDir, "png-frames");
  await mkdir(framesDir, { recursive: true });
  // Written with 9 digits, renamed in the zip to the width the frame count needs.
  await runFfmpeg(
    options.ffmpegPath,
    [
      ...["-hide_banner", "-loglevel", "error", "-y", "-i", options.input],
      ...["-map", "0:v", "-pix_fmt", "rgba", "-start_number", "0", "-f", "image2"],
      join(framesDir, "frame_%09d.png"),
    ],
    options.signal,
  );
  options.signal?.throwIfAborted();
  const files = (await readdir(framesDir)).filter((name) => name.endsWith(".png")).sort();
  const digits = frameDigits(files.length);
  const zip = createZip("zip", { store: true, forceLocalTime: false, statConcurrency: 1 });
  const written = pipeline(zip, createWriteStream(options.output));
  files.forEach((file, index) => {
    const name = `frame_${String(index).padStart(digits, "0")}.png`;
    zip.file(join(framesDir, file), { name, date: FIXED_ZIP_DATE, mode: 0o644 });
  });
  await zip.finalize();
  await written;
}
