// Every example renders with the real engine, and the promises their READMEs make hold in the
// decoded video: alpha where the page is transparent, audio of the right length, variables that
// change pixels; a chunk of each that starts mid-way (chunk-jump.test.ts) decodes to the same
// frames. Low fps keeps the suite quick; frame-exactness is covered in render.test.ts.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineError } from "./errors";
import { decodeFrame, pixelAt, probeMedia } from "./testing/probe";
import { renderComposition } from "./render";
import { compareLateChunk } from "./testing/chunk-compare";
import { frameCount } from "../shared/frames";

const EXAMPLES = resolve(import.meta.dirname, "../../examples");
let out: string;

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), "svc-examples-"));
});

afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

function example(name: string): string {
  return join(EXAMPLES, name);
}

describe("examples", () => {
  it.each([
    "hello-world",
    "lower-third",
    "alpha-overlay",
    "with-audio",
    "multi-scene",
    "gsap-heavy",
    "adaptive",
  ])(
    "%s renders to an mp4 of the declared length, and in chunks to the same frames",
    async (name) => {
      const options = {
        projectDir: example(name),
        fps: 4,
        quality: "draft" as const,
        allowNetwork: false,
      };
      const result = await renderComposition({ ...options, output: join(out, `${name}.mp4`) });
      const info = await probeMedia(result.outputPath, { countFrames: true });
      const video = info.streams.find((s) => s.type === "video")!;
      expect(video).toMatchObject({
        codec: "h264",
        width: 1920,
        height: 1080,
        frames: result.frames,
      });
      // The format's frame count: a started frame counts (shared/frames.ts), not round().
      expect(result.frames).toBe(frameCount(result.durationSeconds, 4));
      expect(result.warnings).toEqual([]);
      // A chunk from past the middle on, its page jumped there, shows the same frames.
      const late = await compareLateChunk(
        options,
        result.outputPath,
        result.frames,
        join(out, name),
      );
      expect(late.result.catchUp.mode).toBe("jump");
      expect(late.minSsim).toBeGreaterThanOrEqual(0.999);
      // Frame for frame, also with Chromium's sandbox on (the default for closed renders), where
      // the page's compositor runs in a process of its own (CapturePage.forgetRasterHistory).
      expect(late.differing).toBe(0);
    },
  );

  it.each(["webm", "mov"] as const)("alpha-overlay keeps transparency in %s", async (format) => {
    const result = await renderComposition({
      projectDir: example("alpha-overlay"),
      output: join(out, `alpha.${format}`),
      format,
      fps: 2,
      quality: "draft",
    });
    const frame = await decodeFrame(result.outputPath, 5, { alpha: true }); // 2.5 s: the card is in
    expect(pixelAt(frame, 100, 100)[3]).toBe(0);
    const [r, g, b, a] = pixelAt(frame, 1180, 824);
    expect(a).toBe(255);
    expect(r).toBeGreaterThan(230);
    expect(g).toBeLessThan(80);
    expect(b).toBeGreaterThan(70);
    expect(b).toBeLessThan(130);
  });

  it("with-audio has an audio stream as long as the video", async () => {
    const result = await renderComposition({
      projectDir: example("with-audio"),
      output: join(out, "audio.mp4"),
      fps: 2,
      quality: "draft",
    });
    const info = await probeMedia(result.outputPath);
    const audio = info.streams.find((s) => s.type === "audio");
    expect(audio).toMatchObject({ codec: "aac" });
    expect(audio!.durationSeconds).toBeCloseTo(result.durationSeconds, 1);
  });

  describe("lower-third variables", () => {
    it("change the output: the accent bar takes the accent colour", async () => {
      const result = await renderComposition({
        projectDir: example("lower-third"),
        output: join(out, "accent.mp4"),
        fps: 2,
        variables: { accent: "#22aa44", title: "Grace Hopper" },
        strictVariables: true,
      });
      const [r, g, b] = pixelAt(await decodeFrame(result.outputPath, 4), 300, 950);
      expect(Math.abs(r - 0x22)).toBeLessThan(16);
      expect(Math.abs(g - 0xaa)).toBeLessThan(16);
      expect(Math.abs(b - 0x44)).toBeLessThan(16);
      expect(result.warnings).toEqual([]);
    });

    it("fail in strict mode with the issue listed, and warn otherwise", async () => {
      const bad = { accent: "not-a-colour", size: 500, nope: 1 };
      const strict = await renderComposition({
        projectDir: example("lower-third"),
        output: join(out, "strict.mp4"),
        variables: bad,
        strictVariables: true,
      }).catch((e: unknown) => e);
      expect(strict).toBeInstanceOf(EngineError);
      expect((strict as EngineError).code).toBe("invalid_variables");
      expect((strict as EngineError).message).toMatch(/accent.*type-mismatch/);
      expect((strict as EngineError).message).toMatch(/size.*out-of-range/);
      expect((strict as EngineError).message).toMatch(/nope.*undeclared/);

      const lenient = await renderComposition({
        projectDir: example("lower-third"),
        output: join(out, "lenient.mp4"),
        variables: { nope: 1 },
        fps: 1,
        quality: "draft",
      });
      expect(lenient.warnings.join("\n")).toMatch(/nope.*undeclared/);
    });
  });
});

describe("svc render", () => {
  it("renders from the command line and prints the result as JSON", async () => {
    const output = join(out, "cli.mp4");
    const { stdout } = await promisify(execFile)(process.execPath, [
      resolve(import.meta.dirname, "../../bin/svc.js"),
      "render",
      example("hello-world"),
      "-o",
      output,
      "--fps",
      "2",
      "--quality",
      "draft",
      "--json",
    ]);
    const result = JSON.parse(stdout) as { output_path: string; frames: number; width: number };
    expect(result).toMatchObject({ output_path: output, frames: 10, width: 1920 });
  });

  it("explains a bad flag in one line and exits 2", async () => {
    const error = await promisify(execFile)(process.execPath, [
      resolve(import.meta.dirname, "../../bin/svc.js"),
      "render",
      example("hello-world"),
      "--fps",
      "0",
    ]).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^error: --fps must be a whole number from 1 to 240/),
    });
    expect((error as { stderr: string }).stderr).not.toMatch(/\n\s+at /);
  });
});
