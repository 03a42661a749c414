// Which picture of a <video> the page shows at a time, and when it is shown, as the reference
// renderer draws video: it extracts the clip's frames with FFmpeg at the output frame rate
// (frame k = the picture on screen at media time mediaStart + k / fps) and draws frame
// floor(elapsed x rate x fps) as an image from data-start until the clip's end (its engine's
// videoFrameExtractor.ts, FrameLookupTable). svc lets Chromium decode the clip and
// seeks it to the same media time, so both show the same picture for every frame, at any
// data-start, data-media-start or data-playback-rate, looping and holding the last frame alike.
import { numberAttr } from "./layout";

/** The reference's bounds of data-playback-rate (its core's clampPlaybackRate). */
const MIN_RATE = 0.1;
const MAX_RATE = 10;
/** Keeps 0.28 x 25 (6.9999...) on frame 7, as the reference's lookup does. */
const FRAME_EPSILON = 1e-9;

export interface VideoTiming {
  /** Seconds on the root timeline where the clip starts. */
  start: number;
  /** Media seconds shown at `start` (data-media-start, or its alias data-playback-start). */
  mediaStart: number;
  /** Media seconds per second of the composition (data-playback-rate). */
  rate: number;
  loop: boolean;
}

/** data-playback-rate, clamped as the reference clamps it; 1 when absent or not a number > 0. */
export function playbackRate(element: Element): number {
  const rate = numberAttr(element, "data-playback-rate");
  return rate !== undefined && rate > 0 ? Math.min(MAX_RATE, Math.max(MIN_RATE, rate)) : 1;
}

/** data-playback-start (the reference reads it first), else data-media-start, else 0. */
export function mediaStartOf(element: Element): number {
  for (const name of ["data-playback-start", "data-media-start"]) {
    const value = numberAttr(element, name);
    if (value !== undefined && value >= 0) return value;
  }
  return 0;
}

/**
 * Where the clip stops being shown when it has neither data-end nor data-duration: after the rest
 * of its media at its rate, or never when it loops or its length is unknown.
 */
export function naturalEnd(timing: VideoTiming, length: number): number {
  if (timing.loop || !Number.isFinite(length) || length <= 0) return Infinity;
  return timing.start + Math.max(0, length - timing.mediaStart) / timing.rate;
}

/**
 * The media time to seek to at composition time `t`. With `fps` (renders) it is the time of the
 * frame the reference extracted for that output frame; without (a preview that knows no frame
 * rate) the exact media time. `length` is the clip's duration in seconds (NaN while unknown).
 */
export function mediaTimeAt(
  timing: VideoTiming,
  t: number,
  length: number,
  fps: number | undefined,
): number {
  let elapsed = Math.max(0, t - timing.start);
  const known = Number.isFinite(length) && length > 0;
  const remaining = known ? Math.max(0, length - timing.mediaStart) : Infinity;
  if (timing.loop && known && remaining > 0) {
    const loopLength = remaining / timing.rate;
    if (elapsed >= loopLength) elapsed %= loopLength;
  }
  let media: number;
  if (fps !== undefined && fps > 0) {
    let frame = Math.floor(elapsed * timing.rate * fps + FRAME_EPSILON);
    // The extraction holds Math.round(remaining x fps) frames; past them the last one stays.
    if (known) frame = Math.min(frame, Math.max(1, Math.round(remaining * fps)) - 1);
    media = timing.mediaStart + frame / fps;
  } else {
    media = timing.mediaStart + elapsed * timing.rate;
  }
  return known ? Math.min(media, length) : media;
}
