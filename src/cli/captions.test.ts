// `svc render --captions` through the real binary: a broken file is refused with its line before
// anything renders; a good one is burned in, carried as a soft subtitle track (mov_text in MP4,
// WebVTT in WebM) and written as a sidecar next to the video.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveFfprobe } from "../engine/ffmpeg/ffmpeg";
import { runCli, tempDir } from "./testing/cloud-service";

let dir: string;
beforeAll(async () => {
  dir = await tempDir("svc-captions-cli-");
  await mkdir(join(dir, "project"));
  await writeFile(
    join(dir, "project", "index.html"),
    `<!doctype html><html><body style="margin:0;background:#000">
<div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="0.6"></div></body></html>`,
  );
  await writeFile(join(dir, "good.srt"), "1\n00:00:00,100 --> 00:00:00,500\nHello captions\n");
  await writeFile(
    join(dir, "bad.srt"),
    "1\n00:00:00,100 --> 00:00:00,500\nHi\n\n2\n00:00:01 --> x\nNo\n",
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function subtitleCodecs(file: string): Promise<string[]> {
  const ffprobe = (await resolveFfprobe()).path;
  const out = execFileSync(ffprobe, [
    ...["-v", "error", "-select_streams", "s", "-show_entries", "stream=codec_name"],
    ...["-of", "csv=p=0", file],
  ]).toString();
  return out.split("\n").filter(Boolean);
}

describe("svc render --captions", () => {
  it("refuses a broken caption file naming its line, and renders nothing", async () => {
    const output = join(dir, "out", "bad.mp4");
    const run = await runCli(
      ["render", "project", "--captions", "bad.srt", "-o", output, "--fps", "5"],
      { cwd: dir, env: {} },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--captions bad.srt: Line 6:");
    expect(existsSync(join(dir, "out"))).toBe(false);
  });

  it("refuses an unknown style", async () => {
    const run = await runCli(
      ["render", "project", "--captions", "good.srt", "--caption-style", "fancy"],
      { cwd: dir, env: {} },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--caption-style must be one of clean, karaoke, social, band");
  });

  it("adds a soft track and a sidecar to mp4 and webm", async () => {
    for (const [format, sidecar, codec] of [
      ["mp4", "srt", "mov_text"],
      ["webm", "vtt", "webvtt"],
    ] as const) {
      const output = join(dir, "out", `video.${format}`);
      const run = await runCli(
        [
          ...["render", "project", "--captions", "good.srt", "--caption-style", "band"],
          ...["--caption-track", "--caption-sidecar", sidecar, "--format", format],
          ...["-o", output, "--fps", "5", "--quality", "draft", "--workers", "1"],
        ],
        { cwd: dir, env: {} },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(await subtitleCodecs(output)).toEqual([codec]);
      const side = join(dir, "out", `video.${sidecar}`);
      expect(run.stdout).toContain(`Captions ${side}`);
      expect(readFileSync(side, "utf8")).toContain("Hello captions");
    }
  });
});
