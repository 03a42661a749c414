// Tests' check that a chunk of a distributed render shows what a whole render shows: the chunk
// that starts in the middle of the video (so its page jumps there) is rendered on its own, and its
// segments are decoded against the whole render's frames — equal, or SSIM >= 0.999 per frame where
// Chromium's raster differs between browser runs.
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { renderChunk, type ChunkResult } from "../chunks";
import { resolveFfmpeg } from "../ffmpeg/ffmpeg";
import { segmentLength, type Chunk } from "../stages/plan";
import { frameHashes } from "./probe";
import type { RenderCompositionOptions } from "../types";

const execFileAsync = promisify(execFile);

export interface ChunkComparison {
  chunk: Chunk;
  result: ChunkResult;
  /** Frames that are not byte-equal after decoding, and the lowest SSIM among them (1 if none). */
  differing: number;
  minSsim: number;
}

/** Renders the chunk from just past the middle segment to the end and compares it with `wholePath`. */
export async function compareLateChunk(
  options: Omit<RenderCompositionOptions, "output" | "thumbnail"> & { fps: number },
  wholePath: string,
  frames: number,
  workDir: string,
): Promise<ChunkComparison> {
  const length = segmentLength(frames, options.fps);
  const segments = Math.ceil(frames / length);
  const firstSegment = Math.ceil(segments / 2);
  const chunk: Chunk = {
    index: 1,
    firstSegment,
    segmentCount: segments - firstSegment,
    firstFrame: firstSegment * length,
    frameCount: frames - firstSegment * length,
  };
  const outputDir = join(workDir, "late-chunk");
  await mkdir(outputDir, { recursive: true });
  const result = await renderChunk({ ...options, chunk, frames, outputDir });
  const whole = (await frameHashes(wholePath)).slice(chunk.firstFrame);
  const parts: string[] = [];
  for (const file of result.segmentFiles) parts.push(...(await frameHashes(file)));
  if (parts.length !== whole.length) {
    throw new Error(`the chunk has ${parts.length} frames, the whole render ${whole.length}`);
  }
  const differing = parts.filter((hash, i) => hash !== whole[i]).length;
  const minSsim =
    differing === 0
      ? 1
      : await lowestSsim(wholePath, chunk.firstFrame, result.segmentFiles, workDir);
  return { chunk, result, differing, minSsim };
}

/** The lowest per-frame SSIM between `wholePath` from `fromFrame` on and the segments in order. */
async function lowestSsim(
  wholePath: string,
  fromFrame: number,
  segmentFiles: string[],
  workDir: string,
): Promise<number> {
  const list = join(workDir, "late-chunk-segments.txt");
  await writeFile(list, segmentFiles.map((file) => `file '${file}'`).join("\n") + "\n");
  const ffmpeg = await resolveFfmpeg();
  const { stdout } = await execFileAsync(ffmpeg.path, [
    "-v",
    "error",
    "-i",
    wholePath,
    "-f",
    "concat",
    "-safe",
    "0",
    "-i",
    list,
    "-lavfi",
    `[0:v]trim=start_frame=${fromFrame},setpts=PTS-STARTPTS[a];[1:v]setpts=PTS-STARTPTS[b];[a][b]ssim=stats_file=-`,
    "-f",
    "null",
    "-",
  ]);
  const values = [...stdout.matchAll(/All:([0-9.]+)/g)].map((match) => Number(match[1]));
  if (values.length === 0) throw new Error("FFmpeg reported no SSIM");
  return Math.min(...values);
}
