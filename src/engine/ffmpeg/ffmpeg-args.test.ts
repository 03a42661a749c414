// The FFmpeg command lines as data: what each stage asks FFmpeg for, without running it.
import { describe, expect, it } from "vitest";
import {
  atempoStages,
  muxArgs,
  placeClips,
  segmentEncoderArgs,
  thumbnailArgs,
} from "./ffmpeg-args";

const after = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

describe("FFmpeg arguments", () => {
  it("encode exactly the segment's frames, scaled to the output size, without B-frames", () => {
    const args = segmentEncoderArgs({
      output: "/tmp/segment.mp4",
      fps: 30,
      format: "mp4",
      quality: "standard",
      frames: 45,
      size: { width: 1920, height: 1080 },
    });
    expect(after(args, "-frames:v")).toBe("45");
    expect(after(args, "-vf")).toBe(
      "colorspace=all=bt709:iall=bt601-6-625:irange=pc:range=tv:fast=1,scale=1920:1080:flags=bicubic,format=yuv420p,fps=30",
    );
    expect(after(args, "-colorspace")).toBe("bt709");
    expect(after(args, "-bf")).toBe("0");
    expect(after(args, "-threads")).toBe("1");
    expect(args.at(-1)).toBe("/tmp/segment.mp4");
  });

  it("join the segments by stream copy, with an audio mix only when there is audio", () => {
    const base = { listFile: "/w/list.txt", output: "/o.mp4", format: "mp4" as const };
    const silent = muxArgs({ ...base, durationSeconds: 2, audio: [] });
    expect(after(silent, "-c:v")).toBe("copy");
    expect(silent).not.toContain("-filter_complex");
    const withAudio = muxArgs({
      ...base,
      durationSeconds: 2,
      audio: [{ source: "/a.wav", start: 0.5, duration: null, mediaStart: 0, volume: 1 }],
    });
    expect(after(withAudio, "-c:v")).toBe("copy");
    expect(withAudio.filter((arg) => arg === "-i")).toHaveLength(2);
    expect(after(withAudio, "-filter_complex")).toContain("apad=whole_len=96000");
  });

  it("cut the thumbnail at the given time", () => {
    const args = thumbnailArgs("/v.mp4", 2.4, "/t.jpg");
    expect(after(args, "-ss")).toBe("2.400");
    expect(after(args, "-frames:v")).toBe("1");
  });

  it("speed a clip with a playback rate up in atempo stages of 0.5-2, from rate x its offset", () => {
    expect(atempoStages(1)).toEqual([]);
    expect(atempoStages(1.5)).toEqual(["1.5"]);
    expect(atempoStages(3)).toEqual(["2", "1.5"]);
    expect(atempoStages(0.2)).toEqual(["0.5", "0.5", "0.8"]);
    // Starting 0.5 s before the output: 1 s of source at rate 2 is skipped.
    const { clips } = placeClips(
      [{ source: "/v.mp4", start: -0.5, duration: 1.5, mediaStart: 1, volume: 1, rate: 2 }],
      4,
    );
    expect(clips).toEqual([{ input: 0, at: 0, from: 96_000, length: 48_000, volume: 1, rate: 2 }]);
    const args = muxArgs({
      listFile: "/w/list.txt",
      output: "/o.mp4",
      format: "mp4",
      durationSeconds: 4,
      audio: [{ source: "/v.mp4", start: 0, duration: 1, mediaStart: 0, volume: 1, rate: 3 }],
    });
    expect(after(args, "-filter_complex")).toContain(
      "atrim=start_sample=0:end_sample=144000,asetpts=N/SR/TB,atempo=2,atempo=1.5,asetpts=N/SR/TB,atrim=end_sample=48000,",
    );
  });
});
