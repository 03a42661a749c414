import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveFfmpeg } from "../ffmpeg/ffmpeg";
import { decodeFrame, frameHashes, pixelAt, probeMedia } from "./probe";

// Two tiny fixtures made by FFmpeg itself:
// - clip.mp4: 64x48 at 10 fps, 1 s; the left half is green throughout, the right half is red for
//   frames 0-4 and blue for frames 5-9; a 1 s mono 44.1 kHz AAC tone.
// - alpha.webm: 64x48 VP9 with alpha at 10 fps, 0.5 s; left half fully transparent, right half
//   opaque blue.
let dir: string;
let mp4: string;
let webm: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-probe-"));
  mp4 = join(dir, "clip.mp4");
  webm = join(dir, "alpha.webm");
  const ffmpeg = (await resolveFfmpeg()).path;
  const lavfi = (graph: string) => ["-f", "lavfi", "-i", graph];
  execFileSync(ffmpeg, [
    ...["-v", "error", "-y"],
    ...lavfi("color=c=red:s=64x48:r=10:d=0.5"),
    ...lavfi("color=c=blue:s=64x48:r=10:d=0.5"),
    ...lavfi("sine=frequency=440:duration=1:sample_rate=44100"),
    "-filter_complex",
    "[0:v][1:v]concat=n=2:v=1:a=0,drawbox=x=0:y=0:w=32:h=48:color=0x00ff00:t=fill[v]",
    ...["-map", "[v]", "-map", "2:a", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac"],
    mp4,
  ]);
  execFileSync(ffmpeg, [
    ...["-v", "error", "-y"],
    ...lavfi(
      "color=c=black:s=64x48:r=10:d=0.5,format=rgba,geq=r=0:g=0:b=255:a='if(lt(X,32),0,255)'",
    ),
    ...[
      "-c:v",
      "libvpx-vp9",
      "-pix_fmt",
      "yuva420p",
      "-auto-alt-ref",
      "0",
      "-deadline",
      "realtime",
    ],
    webm,
  ]);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Within a few levels of each channel: H.264/VP9 round-trip through YUV is not exact. */
function expectColor(actual: number[], expected: number[]) {
  expected.forEach((value, i) =>
    expect(Math.abs((actual[i] ?? -1) - value)).toBeLessThanOrEqual(8),
  );
}

describe("probeMedia", () => {
  it("reports the container, video and audio streams of an mp4", async () => {
    const info = await probeMedia(mp4, { countFrames: true });
    expect(info.format).toContain("mp4");
    expect(info.durationSeconds).toBeCloseTo(1, 1);
    expect(info.streams).toEqual([
      expect.objectContaining({
        type: "video",
        codec: "h264",
        width: 64,
        height: 48,
        pixFmt: "yuv420p",
        hasAlpha: false,
        fps: 10,
        frames: 10,
      }),
      expect.objectContaining({ type: "audio", codec: "aac", sampleRate: 44100, channels: 1 }),
    ]);
    expect(info.streams[1]?.durationSeconds).toBeCloseTo(1, 1);
  });

  it("sees the alpha channel and the duration of a VP9 webm", async () => {
    const info = await probeMedia(webm, { countFrames: true });
    expect(info.format).toContain("webm");
    expect(info.streams).toEqual([
      expect.objectContaining({ type: "video", codec: "vp9", hasAlpha: true, frames: 5 }),
    ]);
    expect(info.streams[0]?.durationSeconds).toBeCloseTo(0.5, 1);
  });

  it("fails with a code when the file is not media", async () => {
    await expect(probeMedia(join(dir, "missing.mp4"))).rejects.toMatchObject({
      code: "encode_failed",
    });
  });
});

describe("decodeFrame", () => {
  it("decodes exactly the frame asked for", async () => {
    const last = await decodeFrame(mp4, 4);
    const next = await decodeFrame(mp4, 5);
    expect(last.data.length).toBe(64 * 48 * 4);
    expectColor(pixelAt(last, 10, 10), [0, 255, 0, 255]);
    expectColor(pixelAt(last, 50, 10), [255, 0, 0, 255]);
    expectColor(pixelAt(next, 50, 40), [0, 0, 255, 255]);
  });

  it("keeps the alpha of a VP9 webm", async () => {
    const frame = await decodeFrame(webm, 2);
    expect(pixelAt(frame, 10, 10)[3]).toBe(0);
    expectColor(pixelAt(frame, 50, 10), [0, 0, 255, 255]);
    const opaque = await decodeFrame(webm, 2, { alpha: false });
    expect(pixelAt(opaque, 10, 10)[3]).toBe(255);
  });

  it("names the frame count when the frame is past the end", async () => {
    await expect(decodeFrame(mp4, 10)).rejects.toMatchObject({
      code: "invalid_options",
      message: expect.stringContaining("has no frame 10"),
    });
  });

  it("refuses pixels outside the frame", async () => {
    const frame = await decodeFrame(mp4, 0);
    expect(() => pixelAt(frame, 64, 0)).toThrow(RangeError);
  });
});

describe("frameHashes", () => {
  it("gives one hash per frame that changes only when the picture does", async () => {
    const hashes = await frameHashes(mp4);
    expect(hashes).toHaveLength(10);
    expect(new Set(hashes.slice(0, 5)).size).toBe(1);
    expect(hashes[4]).not.toBe(hashes[5]);
    expect(await frameHashes(mp4)).toEqual(hashes);
  });
});
