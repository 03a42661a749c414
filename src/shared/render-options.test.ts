import { describe, expect, it } from "vitest";
import { renderRequestSchema } from "./api";
import { queuedRenderSettingsSchema } from "./ipc";
import {
  checkRenderOptions,
  fromRenderOptions,
  outputSize,
  renderSettingsSchema,
  toRenderOptions,
} from "./render-options";

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

  it("keeps a gif at 1080p and at most 50 fps, and png-sequence at 1080p", () => {
    expect(checkRenderOptions({ format: "gif", fps: 50 })).toMatchObject({ ok: true });
    const fast = checkRenderOptions({ format: "gif", fps: 51 });
    expect(fast).toMatchObject({ ok: false, problem: { param: "fps" } });
    if (!fast.ok) expect(fast.problem.message).toMatch(/at most 50 fps, not 51/);
    expect(checkRenderOptions({ format: "mp4", fps: 60 })).toMatchObject({ ok: true });
    for (const format of ["gif", "png-sequence"]) {
      expect(checkRenderOptions({ format, resolution: "4k" })).toMatchObject({
        ok: false,
        problem: { param: "format" },
      });
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

describe("one render-settings schema", () => {
  it("refuses 4k webm in the API request, the desktop queued render settings and the engine check alike", () => {
    expect(
      renderRequestSchema.safeParse({
        project: { type: "asset_id", asset_id: "asst_x" },
        resolution: "4k",
        format: "webm",
      }).success,
    ).toBe(false);
    expect(queuedRenderSettingsSchema.safeParse({ resolution: "4k", format: "webm" }).success).toBe(
      false,
    );
    expect(checkRenderOptions({ resolution: "4k", format: "webm" }).ok).toBe(false);
  });

  it("gives every side the same defaults", () => {
    const defaults = { fps: 30, quality: "standard", format: "mp4", resolution: "1080p" };
    expect(queuedRenderSettingsSchema.parse({})).toEqual(defaults);
    expect(renderSettingsSchema.parse({})).toEqual(defaults);
    expect(
      renderRequestSchema.parse({ project: { type: "asset_id", asset_id: "asst_x" } }),
    ).toMatchObject(defaults);
  });

  it("maps camelCase settings to the wire and back", () => {
    const settings = {
      fps: 24,
      quality: "high",
      format: "mov",
      resolution: "1080p",
      aspectRatio: "9:16",
    } as const;
    const wire = toRenderOptions(settings);
    expect(wire).toEqual({ ...settings, aspectRatio: undefined, aspect_ratio: "9:16" });
    expect(fromRenderOptions(wire)).toEqual(settings);
    expect(toRenderOptions({ ...settings, aspectRatio: undefined })).not.toHaveProperty(
      "aspect_ratio",
    );
  });
});
