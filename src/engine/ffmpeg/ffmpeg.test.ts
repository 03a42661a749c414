import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ffmpegInfo,
  parseEncoders,
  parseVersion,
  REQUIRED_ENCODERS,
  resolveFfmpeg,
  resolveFfprobe,
} from "./ffmpeg";

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "svc-ffmpeg-"));
  for (const name of ["ffmpeg", "ffprobe"]) {
    writeFileSync(join(dir, name), "#!/bin/sh\necho fake\n");
    chmodSync(join(dir, name), 0o755);
  }
  writeFileSync(join(dir, "not-executable"), "");
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("resolveFfmpeg and resolveFfprobe", () => {
  it("use SVC_FFMPEG_PATH and SVC_FFPROBE_PATH first", async () => {
    const env = {
      SVC_FFMPEG_PATH: join(dir, "ffmpeg"),
      SVC_FFPROBE_PATH: join(dir, "ffprobe"),
      PATH: "/usr/bin",
    };
    await expect(resolveFfmpeg(env)).resolves.toEqual({
      path: env.SVC_FFMPEG_PATH,
      source: "env",
      reason: "SVC_FFMPEG_PATH is set",
    });
    await expect(resolveFfprobe(env)).resolves.toMatchObject({
      path: env.SVC_FFPROBE_PATH,
      source: "env",
    });
  });

  it("name the variable to fix when it points nowhere", async () => {
    for (const path of ["/nonexistent/ffmpeg", join(dir, "not-executable")]) {
      await expect(resolveFfmpeg({ SVC_FFMPEG_PATH: path })).rejects.toMatchObject({
        code: "ffmpeg_not_found",
        message: expect.stringContaining(path),
        hint: expect.stringContaining("SVC_FFMPEG_PATH"),
      });
    }
    await expect(resolveFfprobe({ SVC_FFPROBE_PATH: "/nonexistent" })).rejects.toMatchObject({
      code: "ffmpeg_not_found",
      hint: expect.stringContaining("SVC_FFPROBE_PATH"),
    });
  });

  it("take the bundled static ffmpeg before the one on PATH, because it is faster", async () => {
    const env = { PATH: `/nonexistent-dir:${dir}` };
    await expect(resolveFfmpeg(env)).resolves.toMatchObject({
      path: expect.stringContaining("@ffmpeg-installer"),
      source: "bundled",
      reason: expect.stringContaining("starts in milliseconds"),
    });
  });

  it("find ffprobe on PATH next", async () => {
    const env = { PATH: `/nonexistent-dir:${dir}` };
    await expect(resolveFfprobe(env)).resolves.toEqual({
      path: join(dir, "ffprobe"),
      source: "path",
      reason: "found on PATH",
    });
  });

  it("fall back to the builds shipped in the npm packages", async () => {
    const ffmpeg = await resolveFfmpeg({ PATH: "/nonexistent-dir" });
    const ffprobe = await resolveFfprobe({ PATH: "/nonexistent-dir" });
    expect(ffmpeg).toMatchObject({ source: "bundled", path: expect.stringContaining("ffmpeg") });
    expect(ffprobe).toMatchObject({ source: "bundled", path: expect.stringContaining("ffprobe") });
  });
});

describe("ffmpegInfo", () => {
  it("reads the version and every encoder the output formats need, once per path", async () => {
    const { path } = await resolveFfmpeg();
    const first = ffmpegInfo(path);
    expect(ffmpegInfo(path)).toBe(first);
    const info = await first;
    expect(info.version).not.toBe("unknown");
    expect(info.encoders).toEqual(expect.arrayContaining([...REQUIRED_ENCODERS, "mjpeg"]));
  });

  it("parses version and encoder listings of other builds", () => {
    expect(parseVersion("ffmpeg version 6.1.1-3ubuntu5 Copyright (c) 2000-2023")).toBe(
      "6.1.1-3ubuntu5",
    );
    expect(parseVersion("ffprobe version n7.0 Copyright")).toBe("n7.0");
    const listing = [
      "Encoders:",
      " V..... = Video",
      " A..... = Audio",
      " ------",
      " V....D libx264              libx264 H.264 / AVC",
      " VFS... prores_ks            Apple ProRes (iCodec Pro) (codec prores)",
      " A....D aac                  AAC (Advanced Audio Coding)",
    ].join("\n");
    expect(parseEncoders(listing)).toEqual(["libx264", "prores_ks", "aac"]);
  });
});
