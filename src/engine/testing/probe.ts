// Reads what is inside a video file (ffprobe) and decodes single frames to RGBA (ffmpeg), so
// tests, e2e specs and benchmarks can check sizes, frame counts and pixel values of real output
// (pictures are checked by decoding frames). Test-only: no product code imports it. Decoding a VP9 WebM with alpha forces the libvpx-vp9 decoder: FFmpeg's
// native vp9 decoder ignores the alpha side channel and would report every pixel opaque.
import { spawn } from "node:child_process";
import { EngineError } from "../errors";
import { resolveFfmpeg, resolveFfprobe } from "../ffmpeg/ffmpeg";

export interface MediaStream {
  index: number;
  type: "video" | "audio";
  codec: string;
  width?: number;
  height?: number;
  pixFmt?: string;
  /** True when the stream carries alpha (an alpha pixel format, or WebM's ALPHA_MODE=1 tag). */
  hasAlpha?: boolean;
  /** Average frame rate, e.g. 30 or 29.97. */
  fps?: number;
  /** Frame count: exact with `countFrames`, else the container's figure when it has one. */
  frames?: number;
  durationSeconds?: number;
  sampleRate?: number;
  channels?: number;
}

export interface MediaInfo {
  /** ffprobe's format_name, e.g. "mov,mp4,m4a,3gp,3g2,mj2" or "matroska,webm". */
  format: string;
  durationSeconds: number;
  streams: MediaStream[];
}

export interface ProbeOptions {
  /** Decode the whole file to count video frames exactly (slower). */
  countFrames?: boolean;
  signal?: AbortSignal;
}

export interface DecodedFrame {
  width: number;
  height: number;
  /** width * height * 4 bytes, RGBA, rows top to bottom. */
  data: Buffer;
}

export interface DecodeOptions {
  /** Keep the alpha channel of VP9 WebM (default: when the stream says it has alpha). */
  alpha?: boolean;
  signal?: AbortSignal;
}

export type Rgba = [r: number, g: number, b: number, a: number];

interface FfprobeStream {
  index: number;
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  pix_fmt?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  nb_frames?: string;
  nb_read_frames?: string;
  duration?: string;
  sample_rate?: string;
  channels?: number;
  tags?: Record<string, string>;
}

interface FfprobeOutput {
  format?: { format_name?: string; duration?: string };
  streams?: FfprobeStream[];
}

export async function probeMedia(file: string, options: ProbeOptions = {}): Promise<MediaInfo> {
  const ffprobe = await resolveFfprobe();
  const args = ["-v", "error", "-print_format", "json", "-show_format", "-show_streams"];
  if (options.countFrames) args.push("-count_frames");
  args.push(file);
  const { stdout } = await run(
    ffprobe.path,
    args,
    options.signal,
    `ffprobe could not read ${file}`,
  );
  const parsed = JSON.parse(stdout.toString("utf8")) as FfprobeOutput;
  const streams: MediaStream[] = [];
  for (const raw of parsed.streams ?? []) {
    if (raw.codec_type === "video" || raw.codec_type === "audio") {
      streams.push(toStream(raw, raw.codec_type));
    }
  }
  return {
    format: parsed.format?.format_name ?? "unknown",
    durationSeconds: toNumber(parsed.format?.duration) ?? 0,
    streams,
  };
}

function toStream(raw: FfprobeStream, type: "video" | "audio"): MediaStream {
  const stream: MediaStream = { index: raw.index, type, codec: raw.codec_name ?? "unknown" };
  const duration = toNumber(raw.duration) ?? parseTagDuration(raw.tags);
  if (duration !== undefined) stream.durationSeconds = duration;
  if (type === "video") {
    if (raw.width !== undefined) stream.width = raw.width;
    if (raw.height !== undefined) stream.height = raw.height;
    if (raw.pix_fmt) stream.pixFmt = raw.pix_fmt;
    stream.hasAlpha = hasAlphaPixFmt(raw.pix_fmt) || tag(raw.tags, "alpha_mode") === "1";
    const fps = parseRate(raw.avg_frame_rate) ?? parseRate(raw.r_frame_rate);
    if (fps !== undefined) stream.fps = fps;
    const frames = toNumber(raw.nb_read_frames) ?? toNumber(raw.nb_frames);
    if (frames !== undefined) stream.frames = frames;
  } else {
    const sampleRate = toNumber(raw.sample_rate);
    if (sampleRate !== undefined) stream.sampleRate = sampleRate;
    if (raw.channels !== undefined) stream.channels = raw.channels;
  }
  return stream;
}

function hasAlphaPixFmt(pixFmt: string | undefined): boolean {
  return pixFmt !== undefined && /^(yuva|rgba|bgra|argb|abgr|gbrap|ya)/.test(pixFmt);
}

function tag(tags: Record<string, string> | undefined, name: string): string | undefined {
  if (!tags) return undefined;
  const key = Object.keys(tags).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : tags[key];
}

/** Matroska keeps stream durations in a "DURATION" tag: "00:00:03.000000000". */
function parseTagDuration(tags: Record<string, string> | undefined): number | undefined {
  const match = /^(\d+):(\d+):(\d+(?:\.\d+)?)$/.exec(tag(tags, "duration") ?? "");
  if (!match) return undefined;
  return Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]);
}

function parseRate(rate: string | undefined): number | undefined {
  const match = /^(\d+)\/(\d+)$/.exec(rate ?? "");
  if (!match) return toNumber(rate);
  const den = Number(match[2]);
  return den === 0 ? undefined : Number(match[1]) / den;
}

function toNumber(value: string | number | undefined): number | undefined {
  if (value === undefined || value === "" || value === "N/A") return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}

/** Decodes exactly frame `frameIndex` (0-based, in decode order of presentation) to RGBA. */
export async function decodeFrame(
  file: string,
  frameIndex: number,
  options: DecodeOptions = {},
): Promise<DecodedFrame> {
  if (!Number.isInteger(frameIndex) || frameIndex < 0) {
    throw new EngineError(
      "invalid_options",
      `Frame index must be a whole number >= 0, got ${frameIndex}.`,
    );
  }
  const info = await probeMedia(file, { signal: options.signal });
  const video = info.streams.find((s) => s.type === "video");
  if (!video?.width || !video.height) {
    throw new EngineError("invalid_options", `${file} has no video stream to decode.`);
  }
  const ffmpeg = await resolveFfmpeg();
  const args = ["-v", "error", "-nostdin"];
  if (video.codec === "vp9" && (options.alpha ?? video.hasAlpha)) args.push("-c:v", "libvpx-vp9");
  args.push(
    "-i",
    file,
    "-map",
    `0:${video.index}`,
    "-vf",
    `select=eq(n\\,${frameIndex})`,
    "-vsync",
    "0",
    "-frames:v",
    "1",
    "-f",
    "rawvideo",
    "-pix_fmt",
    "rgba",
    "pipe:1",
  );
  const { stdout } = await run(
    ffmpeg.path,
    args,
    options.signal,
    `ffmpeg could not decode ${file}`,
  );
  const size = video.width * video.height * 4;
  if (stdout.length < size) {
    throw new EngineError(
      "invalid_options",
      `${file} has no frame ${frameIndex}${video.frames ? ` (it has ${video.frames} frames)` : ""}.`,
    );
  }
  return { width: video.width, height: video.height, data: stdout.subarray(0, size) };
}

/** The RGBA value of one pixel of a decoded frame. */
export function pixelAt(frame: DecodedFrame, x: number, y: number): Rgba {
  if (x < 0 || y < 0 || x >= frame.width || y >= frame.height) {
    throw new RangeError(`Pixel (${x}, ${y}) is outside the ${frame.width}x${frame.height} frame.`);
  }
  const offset = (Math.floor(y) * frame.width + Math.floor(x)) * 4;
  const d = frame.data;
  return [d[offset] ?? 0, d[offset + 1] ?? 0, d[offset + 2] ?? 0, d[offset + 3] ?? 0];
}

/**
 * MD5 of every decoded video frame (as RGBA), in order: two videos with equal lists decode to
 * identical pictures, which is how determinism and workers:1 == workers:2 are checked.
 */
export async function frameHashes(file: string, options: DecodeOptions = {}): Promise<string[]> {
  const info = await probeMedia(file, { signal: options.signal });
  const video = info.streams.find((s) => s.type === "video");
  const ffmpeg = await resolveFfmpeg();
  const args = ["-v", "error", "-nostdin"];
  if (video?.codec === "vp9" && (options.alpha ?? video.hasAlpha)) args.push("-c:v", "libvpx-vp9");
  args.push(
    "-i",
    file,
    "-map",
    "0:v:0",
    "-vsync",
    "0",
    "-pix_fmt",
    "rgba",
    "-f",
    "framemd5",
    "pipe:1",
  );
  const { stdout } = await run(
    ffmpeg.path,
    args,
    options.signal,
    `ffmpeg could not decode ${file}`,
  );
  return stdout
    .toString("utf8")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"))
    .map((line) => line.split(",").pop()?.trim() ?? "");
}

function run(
  command: string,
  args: string[],
  signal: AbortSignal | undefined,
  failure: string,
): Promise<{ stdout: Buffer }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], signal });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (error) => {
      if (signal?.aborted) {
        reject(new EngineError("cancelled", `${failure}: cancelled.`));
      } else {
        reject(new EngineError("ffmpeg_not_found", `${failure}: ${error.message}`));
      }
    });
    child.on("close", (code) => {
      if (code === 0) {
        resolve({ stdout: Buffer.concat(out) });
      } else if (!signal?.aborted) {
        const stderr = Buffer.concat(err).toString("utf8").trim().split("\n").slice(-3).join(" ");
        reject(new EngineError("encode_failed", `${failure}: ${stderr || `exit code ${code}`}`));
      }
    });
  });
}
