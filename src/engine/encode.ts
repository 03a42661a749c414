// Encoding: captured frames stream into FFmpeg's stdin (no per-frame files), one FFmpeg per
// segment of frames, each frame with its timestamp (frame-stream.ts) so that frames which did not
// change are not sent at all and FFmpeg repeats the previous picture. Segment boundaries depend
// only on the frame count, never on the worker count, so one worker and four workers produce the
// same bytes; segments are joined without re-encoding and the audio is mixed in the same final
// pass.
import { spawn, type ChildProcess } from "node:child_process";
import { rm, writeFile } from "node:fs/promises";
import { setPriority } from "node:os";
import { join } from "node:path";
import type { OutputFormat, Quality } from "../shared/render-options";
import { EngineError } from "./errors";
import { frameCluster, imageSize, streamHeader } from "./frame-stream";

export type FrameImageFormat = "jpeg" | "png";

interface VideoCodecSettings {
  /** Container of the intermediate segments. */
  segmentFormat: string;
  segmentExtension: string;
  /** Pixel format the encoder takes, converted once per new picture (not per repeated frame). */
  pixelFormat: string;
  args(quality: Quality): string[];
  audioArgs: string[];
  muxArgs: string[];
}

/**
 * Encoder presets per format and quality tier. draft favours speed, standard balances, high
 * spends time for quality. x264 is deterministic for a given input and settings, which the
 * "two renders give identical frames" promise relies on.
 */
const CODECS: Record<OutputFormat, VideoCodecSettings> = {
  mp4: {
    // MP4 segments keep each frame's exact time (timescale 15360 at 30 fps); Matroska rounds
    // timestamps to the millisecond, and the joined file carried frames up to 0.5 ms off the grid.
    segmentFormat: "mp4",
    segmentExtension: "mp4",
    pixelFormat: "yuv420p",
    args: (quality) => [
      "-c:v",
      "libx264",
      "-pix_fmt",
      "yuv420p",
      "-preset",
      // Not ultrafast for draft: it turns off CABAC and the deblocking filter, so a draft came out
      // larger than the standard file (gsap-heavy 10.5 vs 6.5 MB) and blockier, for no CPU saved
      // once the larger output is written (measured alternating, hello-world draft: 35.1 vs 34.4
      // core-s).
      { draft: "superfast", standard: "veryfast", high: "slow" }[quality],
      "-crf",
      { draft: "26", standard: "20", high: "16" }[quality],
      // standard: veryfast with superfast's motion search (diamond, one subpixel pass). x264 was
      // ~20 of the ~110 ms of CPU a changing 1080p frame costs; this takes a third off it, for
      // files ~7% larger at the same CRF and SSIM against the source 0.9950 instead of 0.9955
      // (gsap-heavy, 120 frames; bench/README.md). superfast itself was as cheap again but made
      // files ~85% larger.
      ...(quality === "standard" ? ["-x264-params", "subme=1:me=dia"] : []),
      // No B-frames: segments then join with plain, monotonically increasing timestamps.
      "-bf",
      "0",
    ],
    audioArgs: ["-c:a", "aac", "-b:a", "192k"],
    muxArgs: ["-movflags", "+faststart"],
  },
  webm: {
    segmentFormat: "webm",
    segmentExtension: "webm",
    pixelFormat: "yuva420p",
    args: (quality) => [
      "-c:v",
      "libvpx-vp9",
      "-pix_fmt",
      "yuva420p",
      "-b:v",
      "0",
      "-crf",
      { draft: "40", standard: "32", high: "24" }[quality],
      "-deadline",
      "realtime",
      "-cpu-used",
      { draft: "8", standard: "6", high: "4" }[quality],
      "-row-mt",
      "1",
      "-auto-alt-ref",
      "0",
    ],
    audioArgs: ["-c:a", "libopus", "-b:a", "128k"],
    muxArgs: [],
  },
  mov: {
    segmentFormat: "mov",
    segmentExtension: "mov",
    pixelFormat: "yuva444p10le",
    args: (quality) => [
      "-c:v",
      "prores_ks",
      "-profile:v",
      "4444",
      "-pix_fmt",
      "yuva444p10le",
      "-qscale:v",
      { draft: "12", standard: "8", high: "4" }[quality],
      "-vendor",
      "apl0",
    ],
    audioArgs: ["-c:a", "aac", "-b:a", "192k"],
    muxArgs: [],
  },
};

export function segmentExtension(format: OutputFormat): string {
  return CODECS[format].segmentExtension;
}

export interface SegmentEncoderOptions {
  ffmpegPath: string;
  output: string;
  fps: number;
  format: OutputFormat;
  quality: Quality;
  imageFormat: FrameImageFormat;
  /** Frames in the segment: exactly this many are encoded, whatever FFmpeg's fps filter does at the end. */
  frames: number;
  /** Output frame size; captured frames are scaled to it when a composition's shape is slightly off. */
  size: { width: number; height: number };
  /**
   * Encoder threads, 1 by default: one worker's capture is several times slower than one encoder
   * thread (bench/README.md), so more threads only add overhead, and a fixed count keeps x264's
   * output the same on every machine.
   */
  threads?: number;
}

/**
 * Segment encoders run below the browsers: capture is the serial, critical path of every worker
 * and the encoders have slack (they keep up at a fraction of a core), so they should take the CPU
 * the capture chain leaves idle rather than delay it (bench/README.md).
 */
const ENCODER_NICENESS = 10;

function lowerPriority(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    setPriority(pid, ENCODER_NICENESS);
  } catch {
    // Not permitted here (or the process already exited): it still encodes, only sooner.
  }
}

/**
 * One FFmpeg process that turns a stream of JPEG/PNG frames into one video segment. `write(null)`
 * says "the same picture as the previous frame": nothing is sent, and FFmpeg's fps filter repeats
 * the previous picture (already decoded, scaled and converted) for that frame, so the output has
 * every frame at a constant rate.
 */
export class SegmentEncoder {
  private readonly child: ChildProcess;
  private readonly done: Promise<void>;
  /** `done` settled either way: the process has exited and been reaped (or never started). */
  private readonly exited: Promise<void>;
  private stderrTail = "";
  private failure: Error | undefined;
  /** Frames written so far (sent or repeated); the next frame's index. */
  private frames = 0;
  private lastImage: Buffer | undefined;
  private lastSentIndex = -1;
  private headerSent = false;

  constructor(private readonly options: SegmentEncoderOptions) {
    const codec = CODECS[options.format];
    const { width, height } = options.size;
    const args = [
      "-hide_banner",
      "-loglevel",
      "error",
      "-y",
      "-f",
      "matroska",
      "-i",
      "pipe:0",
      "-vf",
      // Scale and convert once per new picture, then let fps fill in the repeated frames.
      `scale=${width}:${height}:flags=bicubic,format=${codec.pixelFormat},fps=${options.fps}`,
      // Some FFmpeg versions let fps stretch the last picture by one more frame at the end.
      "-frames:v",
      String(options.frames),
      ...codec.args(options.quality),
      // Frames are converted with the BT.601 matrix; say so, so players decode the colours exactly.
      "-colorspace",
      "smpte170m",
      "-color_primaries",
      "bt709",
      "-color_trc",
      "bt709",
      "-threads",
      String(options.threads ?? 1),
      "-an",
      "-f",
      codec.segmentFormat,
      options.output,
    ];
    this.child = spawn(options.ffmpegPath, args, { stdio: ["pipe", "ignore", "pipe"] });
    lowerPriority(this.child.pid);
    this.child.stderr!.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-4000);
    });
    // Writes after FFmpeg died surface as EPIPE; the exit status below carries the real reason.
    this.child.stdin!.on("error", () => undefined);
    this.done = new Promise((resolve, reject) => {
      this.child.once("error", (error) => {
        this.failure = error;
        reject(
          new EngineError(
            "ffmpeg_not_found",
            `FFmpeg could not start: ${error.message}`,
            "Check that FFmpeg is installed and runs.",
          ),
        );
      });
      this.child.once("exit", (code, signal) => {
        if (code === 0) return resolve();
        const reason =
          this.stderrTail.trim().split("\n").slice(-3).join(" ") || `exit ${code ?? signal}`;
        this.failure = new EngineError(
          "encode_failed",
          `FFmpeg failed to encode: ${reason}`,
          "Check FFmpeg and its encoders.",
        );
        reject(this.failure);
      });
    });
    this.done.catch(() => undefined);
    this.exited = this.done.then(
      () => undefined,
      () => undefined,
    );
  }

  /**
   * Queues the next frame, or with null repeats the previous picture; resolves when FFmpeg can
   * take more (back-pressure).
   */
  async write(frame: Buffer | null): Promise<void> {
    if (this.failure) throw this.failure;
    const index = this.frames++;
    if (frame === null) {
      if (!this.lastImage) throw new Error("The first frame of a segment cannot be a repeat.");
      return;
    }
    this.lastImage = frame;
    this.lastSentIndex = index;
    await this.send(index, frame);
  }

  private async send(index: number, image: Buffer): Promise<void> {
    const stdin = this.child.stdin!;
    if (!this.headerSent) {
      // The track says the size of the captured pictures (FFmpeg's decoder fails on pictures
      // smaller than the track size), which only the first picture tells.
      this.headerSent = true;
      const { imageFormat: codec, fps } = this.options;
      stdin.write(streamHeader({ codec, fps, ...imageSize(image, codec) }));
    }
    const [head, body] = frameCluster(index, image);
    stdin.write(head);
    if (stdin.write(body)) return;
    await new Promise<void>((resolve, reject) => {
      const onDrain = () => {
        cleanup();
        resolve();
      };
      const onExit = () => {
        cleanup();
        reject(
          this.failure ??
            new EngineError("encode_failed", "FFmpeg stopped while frames were still coming."),
        );
      };
      const cleanup = () => {
        stdin.off("drain", onDrain);
        this.child.off("exit", onExit);
      };
      stdin.once("drain", onDrain);
      this.child.once("exit", onExit);
    });
  }

  async finish(): Promise<void> {
    // The fps filter fills frames up to the last timestamp it sees: when the segment ends on
    // repeated frames, send the picture once more at the last index so they are all there.
    if (this.lastImage && this.lastSentIndex !== this.frames - 1) {
      this.lastSentIndex = this.frames - 1;
      await this.send(this.frames - 1, this.lastImage);
    }
    this.child.stdin!.end();
    await this.done;
  }

  /** Stops FFmpeg at once; resolves when its process has exited. */
  kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    return this.exited;
  }
}

export interface AudioInput {
  /** A file path or URL FFmpeg can read. */
  source: string;
  /** Seconds on the output timeline where the clip starts. */
  start: number;
  /** Seconds of the clip to play, or null for all of it. */
  duration: number | null;
  /** Seconds into the source where playback starts. */
  mediaStart: number;
  volume: number;
}

export interface MuxOptions {
  ffmpegPath: string;
  segments: string[];
  output: string;
  format: OutputFormat;
  durationSeconds: number;
  audio: AudioInput[];
  workDir: string;
  signal?: AbortSignal;
}

/** The mix's sample rate: every clip is resampled to it before it is cut and placed. */
export const AUDIO_SAMPLE_RATE = 48_000;
/** Inputs per amix: more clips are mixed in groups, then the groups mixed. */
const MIX_GROUP = 32;

/** A clip as it is placed on the output, in samples at AUDIO_SAMPLE_RATE. */
export interface PlacedClip {
  /** Index into the inputs it came from. */
  input: number;
  /** First output sample the clip sounds at. */
  at: number;
  /** First sample of the (resampled) source that plays. */
  from: number;
  /** Samples that play: at least 1, never past the end of the output. */
  length: number;
  volume: number;
}

/**
 * Where each clip sounds, in whole samples of a `durationSeconds` output: a clip starting before 0
 * loses its head, one running past the end loses its tail, and one with nothing audible inside the
 * output (zero or negative length, starting at or after the end) is left out.
 */
export function placeClips(
  inputs: AudioInput[],
  durationSeconds: number,
): { totalSamples: number; clips: PlacedClip[] } {
  const totalSamples = Math.max(0, Math.round(durationSeconds * AUDIO_SAMPLE_RATE));
  const clips: PlacedClip[] = [];
  inputs.forEach((input, index) => {
    const start = Math.round(input.start * AUDIO_SAMPLE_RATE);
    const mediaStart = Math.max(0, Math.round(input.mediaStart * AUDIO_SAMPLE_RATE));
    const at = Math.max(0, start);
    const from = mediaStart + (at - start);
    const end =
      input.duration === null
        ? totalSamples
        : Math.min(totalSamples, start + Math.round(input.duration * AUDIO_SAMPLE_RATE));
    if (end - at < 1 || input.volume <= 0) return;
    clips.push({ input: index, at, from, length: end - at, volume: input.volume });
  });
  return { totalSamples, clips };
}

/**
 * The audio filter graph: each clip resampled, cut and delayed by sample counts, padded with
 * silence to the output's exact length, then mixed. Nothing here reads a timestamp: the static
 * FFmpeg build svc ships (2018) gives adelay's and amix's frames no timestamps, and trimming the
 * mix by time (`atrim=end=<seconds>`) then aborted on an assertion (issue 30). Padding every clip
 * to the full length also keeps amix's level right: it divides by the inputs still running, so
 * clips that ended early made the later ones louder.
 */
function audioFilter(clips: PlacedClip[], firstInputIndex: number, totalSamples: number): string {
  const exact = `asetpts=N/SR/TB,apad=whole_len=${totalSamples},atrim=end_sample=${totalSamples}`;
  if (clips.length === 0) {
    return `anullsrc=r=${AUDIO_SAMPLE_RATE}:cl=stereo,atrim=end_sample=${totalSamples},asetpts=N/SR/TB[aout]`;
  }
  const chains = clips.map((clip, i) => {
    // adelay takes milliseconds and truncates to samples: a quarter sample more lands on `at`.
    const delayMs = (((clip.at + 0.25) * 1000) / AUDIO_SAMPLE_RATE).toFixed(6);
    return (
      `[${firstInputIndex + i}:a]aformat=sample_fmts=fltp:sample_rates=${AUDIO_SAMPLE_RATE}:channel_layouts=stereo,` +
      `atrim=start_sample=${clip.from}:end_sample=${clip.from + clip.length},asetpts=N/SR/TB,` +
      `volume=${clip.volume.toFixed(6)}` +
      (clip.at > 0 ? `,adelay=${delayMs}|${delayMs}` : "") +
      `,${exact}[c${i}]`
    );
  });
  let labels = clips.map((_, i) => `[c${i}]`);
  const mixes: string[] = [];
  for (let level = 0; labels.length > 1; level++) {
    const next: string[] = [];
    for (let g = 0; g < labels.length; g += MIX_GROUP) {
      const group = labels.slice(g, g + MIX_GROUP);
      const label = `[m${level}_${next.length}]`;
      // amix divides by the input count (all inputs run to the end): multiply back.
      mixes.push(
        group.length === 1
          ? `${group[0]}anull${label}`
          : `${group.join("")}amix=inputs=${group.length}:duration=longest:dropout_transition=0,` +
              `volume=${group.length},${exact}${label}`,
      );
      next.push(label);
    }
    labels = next;
  }
  return [...chains, ...mixes, `${labels[0]}${exact}[aout]`].join(";");
}

/** Joins the segments without re-encoding and mixes the audio into the final file. */
export async function muxOutput(options: MuxOptions): Promise<void> {
  const codec = CODECS[options.format];
  const listFile = join(options.workDir, "segments.txt");
  await writeFile(
    listFile,
    options.segments.map((s) => `file '${s.replace(/'/g, "'\\''")}'`).join("\n") + "\n",
  );
  const args = [
    "-hide_banner",
    "-loglevel",
    "error",
    "-y",
    "-f",
    "concat",
    "-safe",
    "0",
    "-i",
    listFile,
  ];
  // A composition with audio gets an audio track of exactly the video's length, silent where no
  // clip sounds (and all through when none is audible inside the video).
  const { totalSamples, clips } = placeClips(options.audio, options.durationSeconds);
  for (const clip of clips) args.push("-i", options.audio[clip.input]!.source);
  args.push("-map", "0:v", "-c:v", "copy");
  if (options.audio.length > 0) {
    args.push("-filter_complex", audioFilter(clips, 1, totalSamples), "-map", "[aout]");
    args.push(...codec.audioArgs);
  }
  args.push(
    ...codec.muxArgs,
    "-f",
    options.format === "mov" ? "mov" : options.format,
    options.output,
  );
  try {
    await runFfmpeg(options.ffmpegPath, args, options.signal);
  } finally {
    await rm(listFile, { force: true });
  }
}

export async function extractThumbnail(
  ffmpegPath: string,
  video: string,
  atSeconds: number,
  output: string,
  signal?: AbortSignal,
): Promise<void> {
  await runFfmpeg(
    ffmpegPath,
    [
      "-hide_banner",
      "-loglevel",
      "error",
      "-y",
      "-ss",
      atSeconds.toFixed(3),
      "-i",
      video,
      "-frames:v",
      "1",
      "-vf",
      "scale=640:-2",
      "-q:v",
      "3",
      output,
    ],
    signal,
  );
}

export function runFfmpeg(ffmpegPath: string, args: string[], signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr!.on(
      "data",
      (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)),
    );
    const onAbort = () => child.kill("SIGKILL");
    signal?.addEventListener("abort", onAbort, { once: true });
    child.once("error", (error) => {
      signal?.removeEventListener("abort", onAbort);
      reject(
        new EngineError(
          "ffmpeg_not_found",
          `FFmpeg could not start: ${error.message}`,
          "Check that FFmpeg is installed and runs.",
        ),
      );
    });
    child.once("exit", (code) => {
      signal?.removeEventListener("abort", onAbort);
      if (code === 0) return resolve();
      if (signal?.aborted) return reject(new EngineError("cancelled", "The render was cancelled."));
      const reason = stderr.trim().split("\n").slice(-3).join(" ") || `exit ${code}`;
      reject(
        new EngineError(
          "encode_failed",
          `FFmpeg failed: ${reason}`,
          "Check FFmpeg and its encoders.",
        ),
      );
    });
  });
}
