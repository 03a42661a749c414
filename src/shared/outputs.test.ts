// The outputs list as every part of svc reads it: `--also` tokens, the plan with top-level values
// filled in, the rules with the field at fault, the file names next to the main file, and the
// charge lines adding up to what the quote says.
import { describe, expect, it } from "vitest";
import { creditsFor, outputCredits } from "./credits";
import { checkOutputs, extraOutputPath, parseAlso, planOutputs } from "./outputs";
import { quoteOutputs } from "./quote";

describe("outputs", () => {
  it("reads --also tokens as aspect ratios, formats and stills", () => {
    expect(parseAlso("9:16, 1:1,gif,still@2.5,still@0:jpeg")).toEqual([
      { aspect_ratio: "9:16" },
      { aspect_ratio: "1:1" },
      { format: "gif" },
      { still: { time: 2.5, format: "png" } },
      { still: { time: 0, format: "jpeg" } },
    ]);
    expect(() => parseAlso("4:3")).toThrow(/"4:3" is not an aspect ratio/);
    expect(() => parseAlso("still@soon")).toThrow(/still's time must be seconds/);
    expect(() => parseAlso("still@1:bmp")).toThrow(/png, jpeg or webp/);
    expect(() => parseAlso(" , ")).toThrow(/empty/);
  });

  it("fills each output from the top level, and plans one output without a list", () => {
    const top = {
      format: "webm" as const,
      resolution: "1080p" as const,
      aspect_ratio: "1:1" as const,
    };
    expect(planOutputs(top)).toEqual([
      {
        index: 0,
        kind: "video",
        format: "webm",
        resolution: "1080p",
        aspect_ratio: "1:1",
        time: null,
      },
    ]);
    expect(
      planOutputs({
        ...top,
        outputs: [{}, { aspect_ratio: "9:16", format: "gif" }, { still: { time: 1 } }],
      }),
    ).toEqual([
      {
        index: 0,
        kind: "video",
        format: "webm",
        resolution: "1080p",
        aspect_ratio: "1:1",
        time: null,
      },
      {
        index: 1,
        kind: "video",
        format: "gif",
        resolution: "1080p",
        aspect_ratio: "9:16",
        time: null,
      },
      { index: 2, kind: "still", format: "png", resolution: "1080p", aspect_ratio: "1:1", time: 1 },
    ]);
  });

  it("names the output at fault", () => {
    const base = { fps: 60, format: "mp4" as const, resolution: "1080p" as const };
    expect(checkOutputs({ ...base, outputs: [{}, { format: "gif" }] })).toEqual({
      index: 1,
      message: expect.stringMatching(/at most 50 fps/),
    });
    expect(
      checkOutputs({ ...base, outputs: [{}, { still: { time: 1 }, resolution: "4k" }] }),
    ).toEqual({
      index: 1,
      message: expect.stringMatching(/1080p/),
    });
    expect(checkOutputs({ ...base, outputs: [{}, { aspect_ratio: "9:16" }] })).toBeUndefined();
  });

  it("names extra files next to the main one, never twice the same", () => {
    const main = { aspect_ratio: "16:9" as const, resolution: "1080p" as const };
    const output = (extra: Record<string, unknown>) => ({
      index: 1,
      kind: "video" as const,
      format: "mp4" as const,
      aspect_ratio: "16:9" as const,
      resolution: "1080p" as const,
      time: null,
      ...extra,
    });
    expect(extraOutputPath("/r/out.mp4", main, output({ aspect_ratio: "9:16" }))).toBe(
      "/r/out-9x16.mp4",
    );
    expect(extraOutputPath("/r/out.mp4", main, output({ format: "png-sequence" }))).toBe(
      "/r/out.zip",
    );
    expect(
      extraOutputPath("/r/out.mp4", main, output({ kind: "still", format: "jpeg", time: 2.5 })),
    ).toBe("/r/out-2.5s.jpg");
    expect(extraOutputPath("/r/out.mp4", main, output({ index: 3 }))).toBe("/r/out-3.mp4");
  });

  it("charges a still one started second and sums the lines as the quote does", () => {
    expect(outputCredits({ kind: "still", resolution: "1080p" }, 12, 30)).toBe(
      creditsFor(1 / 30, "1080p"),
    );
    const lines = quoteOutputs(
      {
        fps: 10,
        format: "mp4",
        resolution: "1080p",
        outputs: [{}, { resolution: "4k" }, { still: { time: 1 } }],
      },
      25,
    );
    expect(lines).toEqual([
      { index: 0, frames: 25, credits: 3 },
      { index: 1, frames: 25, credits: 4.5 },
      { index: 2, frames: 1, credits: 1 },
    ]);
  });
});
