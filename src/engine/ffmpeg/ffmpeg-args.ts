// FFmpeg's command lines, as pure functions of the settings: the encoder of one segment, the join
// of the segments with the audio mix, and the thumbnail. Kept apart from the processes that run
// them (encode.ts) so they can be read, tested and reused without starting FFmpeg. The audio mix
// counts samples, never timestamps (see audioFilter).
import type { OutputFormat, Quality } from "../../shared/render-options";

export type FrameImageFormat = "jpeg" | "png";

interface VideoCodecSettings {
  /** Container of the intermediate segments. */
  segmentFormat: string;
  segmentExtension: string;
  /** Pixel format the encoder takes, converted once per new picture (not per repeated frame). */
  pixelFormat: string;
  /**
   * The YUV matrix the frames are converted with and tagged as. MP4 uses BT.709, as HD video and
   * the reference renderer do: with BT.601 (the converter's default) the file was right for a
   * player that reads the tags, but its luma differed from the reference's by up to 28 of 255 on
   * a pure green (17% of a testsrc2 frame past the compat bench's threshold, issue 42). The
   * formats with alpha keep BT.601 (their frames arrive as RGBA PNGs; one conversion, no detour).
   */
  matrix: "bt709" | "smpte170m";
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
    matrix: "bt709",
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
    matrix: "smpte170m",
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
    matrix: "smpte170m",
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
  // Picture formats (outputs/): segments are lossless QuickTime Animation (an unchanged row costs
  // nothing, ~0.7 core-s per 60 1080p frames), joined and turned into the GIF or the PNGs at the end.
  gif: losslessSegments("rgb24"),
  "png-sequence": losslessSegments("argb"),
};

function losslessSegments(pixelFormat: "rgb24" | "argb"): VideoCodecSettings {
  return {
    segmentFormat: "mov",
    segmentExtension: "mov",
    pixelFormat,
    matrix: "smpte170m",
    args: () => ["-c:v", "qtrle", "-pix_fmt", pixelFormat],
    audioArgs: [],
    muxArgs: [],
  };
}

export function segmentExtension(format: OutputFormat): string {
  return CODECS[format].segmentExtension;
}

/** What a segment encoder needs to know to build its command line. */
export interface SegmentEncodeSettings {
  output: string;
  fps: number;
  format: OutputFormat;
  quality: Quality;
  /** Frames in the segment: exactly this many are encoded. */
  frames: number;
  /** Output frame size; captured frames are scaled to it. */
  size: { width: number; height: number };
  threads?: number;
}

/**
 * Scaling and colour conversion of a captured picture. A JPEG screenshot is full-range BT.601
 * YUV; BT.709 limited range is what the reference converts its screenshots to (its engine's
 * sdrCaptureColor.ts). The colorspace filter changes the matrix YUV to YUV with SIMD (`fast`:
 * the matrix only, as the reference's conversion does, no gamut or gamma change). It comes before
 * the scale so the scale sees limited-range frames: a scale first turned the JPEG's full-range
 * format into a limited one, and colorspace, told full range, then squeezed it twice (white 218).
 * Through planar RGB instead (scale, gbrp, scale), as before, the same frames cost FFmpeg about
 * 30 ms of CPU a 1080p picture against 5 here, and came out within one level (bench/README.md).
 */
function pictureFilter(codec: VideoCodecSettings, width: number, height: number): string {
  const scale = `scale=${width}:${height}:flags=bicubic`;
  if (codec.matrix !== "bt709") return `${scale},format=${codec.pixelFormat}`;
  return (
    "colorspace=all=bt709:iall=bt601-6-625:irange=pc:range=tv:fast=1," +
    `${scale},format=${codec.pixelFormat}`
  );
}

/** One segment: a Matroska stream of JPEG/PNG frames on stdin, encoded to `output`. */
export function segmentEncoderArgs(options: SegmentEncodeSettings): string[] {
  const codec = CODECS[options.format];
  const { width, height } = options.size;
  return [
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
    `${pictureFilter(codec, width, height)},fps=${options.fps}`,
    // Some FFmpeg versions let fps stretch the last picture by one more frame at the end.
    "-frames:v",
    String(options.frames),
    ...codec.args(options.quality),
    // Say which matrix the frames were converted with, so players decode the colours exactly.
    "-colorspace",
    codec.matrix,
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
  /**
   * A video's `data-playback-rate` (1 when absent): its sound plays that much faster, pitch kept
   * (atempo), as the reference mixes it: `duration` seconds of output take duration x rate of source.
   */
  rate?: number;
}

/** What the join needs: the concat list of segments, the audio and the output. */
export interface MuxSettings {
  /** A concat demuxer list file naming the segments in order. */
  listFile: string;
  output: string;
  format: OutputFormat;
  durationSeconds: number;
  audio: AudioInput[];
}

/** The segments joined without re-encoding, with the audio mixed in the same pass. */
export function muxArgs(options: MuxSettings): string[] {
  const codec = CODECS[options.format];
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
    options.listFile,
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
  return args;
}

/**
 * The composition's sound alone, mixed exactly as a render mixes it (the same filter graph), then
 * made 16-bit mono PCM WAV at `sampleRate` for a speech recogniser (`svc captions transcribe`).
 */
export function audioMixArgs(options: {
  audio: AudioInput[];
  durationSeconds: number;
  output: string;
  sampleRate: number;
}): string[] {
  const { totalSamples, clips } = placeClips(options.audio, options.durationSeconds);
  const args = ["-hide_banner", "-loglevel", "error", "-y"];
  for (const clip of clips) args.push("-i", options.audio[clip.input]!.source);
  args.push("-filter_complex", audioFilter(clips, 0, totalSamples), "-map", "[aout]");
  args.push("-ac", "1", "-ar", String(options.sampleRate), "-c:a", "pcm_s16le", "-f", "wav");
  args.push(options.output);
  return args;
}

/** One frame at `atSeconds` of `video`, 640 pixels wide, as JPEG. */
export function thumbnailArgs(video: string, atSeconds: number, output: string): string[] {
  return [
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
  ];
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
  /** Samples of output that play: at least 1, never past the end of the output. */
  length: number;
  volume: number;
  /** Source seconds per output second (1: as recorded). */
  rate: number;
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
    const rate = input.rate !== undefined && input.rate > 0 ? input.rate : 1;
    const at = Math.max(0, start);
    const from = mediaStart + Math.round((at - start) * rate);
    const end =
      input.duration === null
        ? totalSamples
        : Math.min(totalSamples, start + Math.round(input.duration * AUDIO_SAMPLE_RATE));
    if (end - at < 1 || input.volume <= 0) return;
    clips.push({ input: index, at, from, length: end - at, volume: input.volume, rate });
  });
  return { totalSamples, clips };
}

/**
 * atempo factors whose product is `rate`, each within 0.5-2 (all that the static FFmpeg svc ships
 * takes in one stage), as the reference chains them; none for 1.
 */
export function atempoStages(rate: number): string[] {
  let remaining = rate;
  if (!(remaining > 0) || Math.abs(remaining - 1) < 1e-9) return [];
  const stages: number[] = [];
  while (remaining < 0.5 - 1e-9) {
    stages.push(0.5);
    remaining /= 0.5;
  }
  while (remaining > 2 + 1e-9) {
    stages.push(2);
    remaining /= 2;
  }
  if (Math.abs(remaining - 1) >= 1e-9) stages.push(remaining);
  return stages.map((stage) => String(Number(stage.toFixed(6))));
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
    const sourceLength = clip.rate === 1 ? clip.length : Math.ceil(clip.length * clip.rate);
    const tempo = atempoStages(clip.rate);
    return (
      `[${firstInputIndex + i}:a]aformat=sample_fmts=fltp:sample_rates=${AUDIO_SAMPLE_RATE}:channel_layouts=stereo,` +
      `atrim=start_sample=${clip.from}:end_sample=${clip.from + sourceLength},asetpts=N/SR/TB,` +
      (tempo.length
        ? `${tempo.map((stage) => `atempo=${stage}`).join(",")},asetpts=N/SR/TB,atrim=end_sample=${clip.length},`
        : "") +
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
