// The picture a video shows for a time, against the frames the reference extracts for it.
import { describe, expect, it } from "vitest";
import { mediaTimeAt, naturalEnd, type VideoTiming } from "./video-time";

const clip = (timing: Partial<VideoTiming> = {}): VideoTiming => ({
  start: 0,
  mediaStart: 0,
  rate: 1,
  loop: false,
  ...timing,
});

describe("video media time", () => {
  it("counts from data-start and data-media-start on the output frame grid", () => {
    expect(mediaTimeAt(clip({ start: 1, mediaStart: 12.5 }), 2.25, 60, 4)).toBe(13.75);
    // Before its start a clip is at its media start (it is hidden then).
    expect(mediaTimeAt(clip({ start: 1, mediaStart: 12.5 }), 0.5, 60, 4)).toBe(12.5);
  });

  it("takes the frame the reference extracted for an off-grid start or a slow rate", () => {
    // Elapsed 0.15 s at 4 fps is frame 0 of the extraction, not media time 0.15.
    expect(mediaTimeAt(clip({ start: 0.1 }), 0.25, 60, 4)).toBe(0);
    // At half speed the picture changes every other output frame.
    expect(mediaTimeAt(clip({ rate: 0.5, mediaStart: 10 }), 0.25, 60, 4)).toBe(10);
    expect(mediaTimeAt(clip({ rate: 0.5, mediaStart: 10 }), 0.5, 60, 4)).toBe(10.25);
    expect(mediaTimeAt(clip({ rate: 2 }), 0.75, 60, 4)).toBe(1.5);
    // Without a frame rate (a preview) the exact media time.
    expect(mediaTimeAt(clip({ start: 0.1 }), 0.25, 60, undefined)).toBeCloseTo(0.15, 9);
  });

  it("holds the last extracted frame past the end and loops back to the media start", () => {
    // 2 s of media left at 4 fps: 8 frames, the last at 59.75.
    expect(mediaTimeAt(clip({ mediaStart: 58 }), 3, 60, 4)).toBe(59.75);
    expect(mediaTimeAt(clip({ mediaStart: 58, loop: true }), 2.5, 60, 4)).toBe(58.5);
    expect(mediaTimeAt(clip({ mediaStart: 58, loop: true, rate: 2 }), 1.25, 60, 4)).toBe(58.5);
    // A media start past the end shows the last picture.
    expect(mediaTimeAt(clip({ mediaStart: 70 }), 1, 60, 4)).toBe(60);
  });

  it("ends a clip without data-duration after the rest of its media at its rate", () => {
    expect(naturalEnd(clip({ start: 1, mediaStart: 50, rate: 2 }), 60)).toBe(6);
    expect(naturalEnd(clip({ loop: true }), 60)).toBe(Infinity);
    expect(naturalEnd(clip(), Number.NaN)).toBe(Infinity);
  });
});
