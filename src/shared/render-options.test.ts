import { describe, expect, it } from "vitest";
import { checkRenderOptions, outputSize } from "./render-options";

describe("render options", () => {
  it("fills the documented defaults", () => {
    expect(checkRenderOptions({})).toEqual({
      ok: true,
      options: { fps: 30, quality: "standard", format: "mp4", resolution: "1080p" },
    });
  });

  it("refuses 4k with webm and with mov, naming the format", () => {
    for (const format of ["webm", "mov"]) {
      const result = checkRenderOptions({ resolution: "4k", format });
      expect(result).toMatchObject({ ok: false, problem: { param: "format" } });
      if (!result.ok)
        expect(result.problem.message).toContain(`4k cannot be rendered as ${format}`);
    }
  });

  it("keeps fps within 1..240 and whole", () => {
    expect(checkRenderOptions({ fps: 0 })).toMatchObject({ ok: false, problem: { param: "fps" } });
    expect(checkRenderOptions({ fps: 241 })).toMatchObject({
      ok: false,
      problem: { param: "fps" },
    });
    expect(checkRenderOptions({ fps: 29.97 })).toMatchObject({
      ok: false,
      problem: { param: "fps" },
    });
    expect(checkRenderOptions({ fps: 240 })).toMatchObject({ ok: true });
  });

  it("maps aspect ratio and resolution to pixel sizes", () => {
    expect(outputSize("16:9", "1080p")).toEqual({ width: 1920, height: 1080 });
    expect(outputSize("9:16", "1080p")).toEqual({ width: 1080, height: 1920 });
    expect(outputSize("1:1", "1080p")).toEqual({ width: 1080, height: 1080 });
    expect(outputSize("16:9", "4k")).toEqual({ width: 3840, height: 2160 });
  });
});
