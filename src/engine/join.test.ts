// The join of a render in chunks, alone, under generated inputs (fast-check): any frame count and
// fps, any chunk plan, and audio clips anywhere (before 0, on chunk boundaries, at the very end or
// past it, shorter than a frame, cut by their source's end), with any media start and volume.
// Properties: FFmpeg succeeds; the audio track lasts exactly as long as the video; each clip
// sounds from its start time at its own level, and nothing sounds where no clip does.
//
// The clips are sines at multiples of 100 Hz, one frequency per clip: over any 10 ms window they
// are orthogonal, so a window's mean square is exactly the sum of its clips' (amplitude^2 / 2),
// and a window's loudness says which clips play in it.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutputFormat } from "../shared/render-options";
import { joinChunks, planChunks } from "./chunks";
import { AUDIO_SAMPLE_RATE, runFfmpeg, SegmentEncoder, type AudioInput } from "./ffmpeg/encode";
import { resolveFfmpeg } from "./ffmpeg/ffmpeg";
import { segmentLength } from "./stages/plan";
import { probeMedia } from "./testing/probe";
import { decodeAudio, rms } from "./testing/pcm";
import { frameCount } from "../shared/frames";

const RUNS = Number(process.env.SVC_JOIN_PROPERTY_RUNS ?? 30);
const AMPLITUDE = 0.2;
const SOURCE_SECONDS = 3;
/** One source per clip: frequency, and how it is stored (rate, channels, container). */
const SOURCES = [
  { hz: 400, rate: 48_000, channels: 2, file: "s400.wav" },
  { hz: 700, rate: 44_100, channels: 2, file: "s700.wav" },
  // Stereo only: FFmpeg spreads a mono source over two channels at -3 dB each (not checked here).
  { hz: 1100, rate: 22_050, channels: 2, file: "s1100.wav" },
  { hz: 1500, rate: 48_000, channels: 2, file: "s1500.flac" },
];
/** Window of the loudness checks: a whole number of periods of every source. */
const WINDOW = 0.01;
/** Around a clip's edges the resampler and the audio codec smear the sound; skip that much. */
const EDGE = 0.004;
/** How far a faint trace of a clip's edge reaches: one AAC frame and a bit. */
const SMEAR = 0.025;

let scratch: string;
let ffmpegPath: string;
let picture: Buffer;
const segmentCache = new Map<string, Promise<string>>();

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-join-property-"));
  ffmpegPath = (await resolveFfmpeg()).path;
  const jpeg = join(scratch, "picture.jpg");
  await runFfmpeg(ffmpegPath, [
    ...["-v", "error", "-f", "lavfi", "-i", "color=c=0x336699:s=64x64", "-frames:v", "1"],
    jpeg,
  ]);
  picture = await readFile(jpeg);
  for (const source of SOURCES) {
    const wave = `${AMPLITUDE}*sin(2*PI*${source.hz}*t)`;
    const channels = Array.from({ length: source.channels }, () => wave).join("|");
    await runFfmpeg(ffmpegPath, [
      ...["-v", "error", "-f", "lavfi"],
      ...["-i", `aevalsrc=${channels}:s=${source.rate}:d=${SOURCE_SECONDS}`],
      join(scratch, source.file),
    ]);
  }
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A segment of `frames` frames as the engine encodes one (one picture, then repeats). */
function segment(format: OutputFormat, fps: number, frames: number): Promise<string> {
  const key = `${format}-${fps}-${frames}`;
  let made = segmentCache.get(key);
  if (!made) {
    made = (async () => {
      const output = join(scratch, `segment-${key}.${format}`);
      const encoder = new SegmentEncoder({
        ffmpegPath,
        output,
        fps,
        format,
        quality: "draft",
        imageFormat: "jpeg",
        frames,
        size: { width: 64, height: 64 },
      });
      await encoder.write(picture);
      for (let i = 1; i < frames; i++) await encoder.write(null);
      await encoder.finish();
      return output;
    })();
    segmentCache.set(key, made);
  }
  return made;
}

interface Clip {
  source: number;
  start: number;
  mediaStart: number;
  duration: number | null;
  volume: number;
}

/** Where a clip sounds in a video of `seconds`: [from, to), empty when it is not heard at all. */
function audible(clip: Clip, seconds: number): { from: number; to: number; level: number } {
  const sourceLeft = SOURCE_SECONDS - clip.mediaStart;
  const length = Math.min(clip.duration ?? Infinity, sourceLeft);
  const from = Math.max(0, clip.start);
  const to = Math.min(seconds, clip.start + length);
  // RMS of a sine of this amplitude.
  return { from, to, level: (AMPLITUDE * clip.volume) / Math.SQRT2 };
}

const scenario = fc
  .record({
    fps: fc.constantFrom(1, 2, 5, 7, 10, 24, 25, 30, 60),
    seconds: fc.double({ min: 0.02, max: 6, noNaN: true }),
    chunkSeconds: fc.double({ min: 0.1, max: 4, noNaN: true }),
    maxChunks: fc.integer({ min: 1, max: 8 }),
    format: fc.constantFrom<OutputFormat>("mp4", "mov", "webm"),
  })
  .chain(({ fps, seconds, chunkSeconds, maxChunks, format }) => {
    const frames = Math.max(1, frameCount(seconds, fps));
    const duration = frames / fps;
    const plan = planChunks(frames, fps, { chunkSeconds, maxChunks });
    // Places that matter: the start, chunk boundaries, the very end.
    const anchors = [0, duration, ...plan.map((chunk) => chunk.firstFrame / fps)];
    const start = fc.oneof(
      fc.tuple(fc.constantFrom(...anchors), fc.constantFrom(0, -0.001, 0.001, -0.3)),
      fc.tuple(fc.double({ min: -0.5, max: duration, noNaN: true }), fc.constant(0)),
    );
    const clip = fc.record({
      start: start.map(([anchor, offset]) => anchor + offset),
      mediaStart: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 2.5, noNaN: true })),
      duration: fc.oneof(
        fc.constant(null),
        fc.double({ min: 0.0005, max: 1 / fps, noNaN: true }), // shorter than a frame
        fc.double({ min: 0.0005, max: 4, noNaN: true }),
      ),
      volume: fc.double({ min: 0.1, max: 1, noNaN: true }),
    });
    return fc.record({
      fps: fc.constant(fps),
      frames: fc.constant(frames),
      format: fc.constant(format),
      plan: fc.constant(plan),
      clips: fc
        .array(clip, { minLength: 1, maxLength: SOURCES.length })
        .map((clips) => clips.map((c, source): Clip => ({ ...c, source }))),
    });
  });

describe("joining chunks", () => {
  it("mixes every clip at its start time and level into audio exactly as long as the video", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ fps, frames, format, plan, clips }) => {
        const seconds = frames / fps;
        const length = segmentLength(frames, fps);
        const segmentFiles: string[] = [];
        for (const chunk of plan) {
          for (let s = chunk.firstSegment; s < chunk.firstSegment + chunk.segmentCount; s++) {
            const count = Math.min(length, frames - s * length);
            segmentFiles.push(await segment(format, fps, count));
          }
        }
        const output = join(scratch, `joined-${run++}.${format}`);
        const audio: AudioInput[] = clips.map((clip) => ({
          source: join(scratch, SOURCES[clip.source]!.file),
          start: clip.start,
          duration: clip.duration,
          mediaStart: clip.mediaStart,
          volume: clip.volume,
        }));
        await joinChunks({
          segmentFiles,
          output,
          format,
          durationSeconds: seconds,
          audio,
          allowNetwork: false,
        });

        const samples = await decodeAudio(output);
        if (format === "webm") {
          // Matroska says a track's length only in a tag that counts Opus's pre-skip too; the
          // decoder drops it, and what it gives is the track: round(seconds x 48000) samples.
          expect(Math.abs(samples.length - seconds * AUDIO_SAMPLE_RATE)).toBeLessThanOrEqual(1);
        } else {
          // The AAC track holds round(seconds x 48000) samples; the MP4 edit list that hides the
          // encoder's priming samples counts whole milliseconds, so players see it to 1 ms.
          const info = await probeMedia(output);
          const video = info.streams.find((stream) => stream.type === "video");
          const track = info.streams.find((stream) => stream.type === "audio");
          expect(Math.abs(video!.durationSeconds! - seconds)).toBeLessThan(0.001);
          expect(Math.abs(track!.durationSeconds! - video!.durationSeconds!)).toBeLessThan(0.001);
        }
        await rm(output);
        const heard = clips.map((clip) => audible(clip, seconds));
        const edges = heard.filter((h) => h.to > h.from).flatMap((h) => [h.from, h.to]);
        // Window by window: loudness is that of the clips playing there, silence where none is.
        for (let from = 0; from + WINDOW <= seconds; from += WINDOW) {
          const to = from + WINDOW;
          if (edges.some((edge) => edge > from - EDGE && edge < to + EDGE)) continue;
          const playing = heard.filter((h) => h.from <= from && h.to >= to);
          const expected = Math.sqrt(playing.reduce((sum, h) => sum + h.level ** 2, 0));
          const measured = rms(samples, from, to);
          const where = `window ${from.toFixed(3)}-${to.toFixed(3)} s of ${seconds.toFixed(3)} s`;
          // AAC spreads a sudden sound over its 1024-sample frame, a little of it ahead (pre-echo).
          const nearby = heard
            .filter((h) => h.to > h.from && h.to > from - SMEAR && h.from < to + SMEAR)
            .reduce((loudest, h) => Math.max(loudest, h.level), 0);
          if (expected === 0) expect(measured, where).toBeLessThan(0.01 * AMPLITUDE + 0.1 * nearby);
          else expect(measured / expected, where).toBeCloseTo(1, 1);
        }
        // Each clip from its start: loud just after it, and no louder just before it than the
        // clips already playing there.
        for (const h of heard) {
          if (h.to - h.from < 2 * EDGE + 0.001) continue;
          // The clips that sound anywhere in the window just before `at` (one that ends inside
          // it counts: a clip ending 1 ms before this one starts was missed, fast-check seed
          // 362896277).
          const others = (at: number) =>
            Math.sqrt(
              heard
                .filter((o) => o !== h && o.from < at - EDGE / 2 && o.to > at - EDGE * 2)
                .reduce((sum, o) => sum + o.level ** 2, 0),
            );
          const after = rms(samples, h.from + EDGE / 2, Math.min(h.to, h.from + EDGE * 2));
          expect(after, `clip from ${h.from.toFixed(4)} s`).toBeGreaterThan(0.5 * h.level);
          if (h.from >= EDGE * 2) {
            const before = rms(samples, h.from - EDGE * 2, h.from - EDGE / 2);
            const lingering = others(h.from);
            expect(before, `before the clip from ${h.from.toFixed(4)} s`).toBeLessThan(
              lingering + 0.25 * h.level,
            );
          }
        }
      }),
      { numRuns: RUNS },
    );
  }, 300_000);

  it("plays a sped-up video's sound faster, pitch kept: rate x its length of source", async () => {
    // As the reference mixes a video with data-playback-rate (atempo): 3 s of a 400 Hz source at
    // rate 2 sound for 1.5 s of a 2 s output, then silence; at rate 0.25 the 2 s take 0.5 s.
    const fps = 10;
    const seconds = 2;
    const segmentFiles = [await segment("mp4", fps, seconds * fps)];
    const source = join(scratch, SOURCES[0]!.file);
    const level = AMPLITUDE / Math.SQRT2;
    const mix = async (rate: number, mediaStart = 0) => {
      const output = join(scratch, `rate-${rate}.mp4`);
      const clip = { source, start: 0, duration: null, mediaStart, volume: 1, rate };
      await joinChunks({
        segmentFiles,
        output,
        format: "mp4",
        durationSeconds: seconds,
        audio: [clip],
        allowNetwork: false,
      });
      const samples = await decodeAudio(output);
      await rm(output);
      return samples;
    };
    const fast = await mix(2);
    expect(rms(fast, 0.1, 1.4) / level).toBeCloseTo(1, 1);
    expect(rms(fast, 1.6, 1.95)).toBeLessThan(0.01 * AMPLITUDE);
    // Pitch kept: 400 Hz is 2 x 400 zero crossings a second of output.
    let crossings = 0;
    const from = Math.round(0.2 * AUDIO_SAMPLE_RATE);
    const to = Math.round(1.2 * AUDIO_SAMPLE_RATE);
    for (let i = from + 1; i < to; i++) if (fast[i - 1]! < 0 !== fast[i]! < 0) crossings++;
    expect(crossings).toBeGreaterThan(760);
    expect(crossings).toBeLessThan(840);
    // From 2.5 s into the source at rate 2: 0.5 s of source is 0.25 s of output.
    const late = await mix(2, 2.5);
    expect(rms(late, 0.05, 0.2) / level).toBeCloseTo(1, 1);
    expect(rms(late, 0.35, 1.9)).toBeLessThan(0.01 * AMPLITUDE);
    const slow = await mix(0.25);
    expect(rms(slow, 0.1, 1.9) / level).toBeCloseTo(1, 1);
  }, 120_000);
});
