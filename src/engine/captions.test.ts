// The captions layer in real renders (Chromium + FFmpeg, decoded frames): cues appear on the frame
// of their start and leave on the frame of their end, a karaoke word lights up on its start frame,
// a 9:16 frame keeps every caption pixel out of the bottom fifth and the side margins in every
// style, and Arabic and Japanese lines come out in the order and breaks of kept reference pictures.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAPTION_STYLES, parseCaptions, type CaptionTrack } from "../shared/captions";
import { resolveFfmpeg } from "./ffmpeg/ffmpeg";
import { renderStill } from "./outputs/still";
import { renderComposition } from "./render";
import { decodeFrame, type DecodedFrame } from "./testing/probe";
import type { RenderCaptions } from "./types";

const REFERENCES = join(dirname(fileURLToPath(import.meta.url)), "testing", "captions-reference");

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-captions-test-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A black composition of the given size and length, nothing else on it. */
async function blackProject(name: string, width: number, height: number, duration: number) {
  const dir = join(scratch, name);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "index.html"),
    `<!doctype html><html><head><style>html,body{margin:0;background:#000}</style></head><body>
<div id="root" data-composition-id="main" data-width="${width}" data-height="${height}" data-duration="${duration}"></div>
</body></html>`,
  );
  return dir;
}

function track(text: string, name: string): CaptionTrack {
  const result = parseCaptions(text, name);
  if (!result.ok) throw new Error(result.error.message);
  return result.track;
}

/** Pixels matching `test` in a decoded frame, and their bounding box. */
function pixels(frame: DecodedFrame, test: (r: number, g: number, b: number) => boolean) {
  let count = 0;
  let left = Infinity;
  let right = -Infinity;
  let top = Infinity;
  let bottom = -Infinity;
  for (let y = 0; y < frame.height; y++) {
    for (let x = 0; x < frame.width; x++) {
      const at = (y * frame.width + x) * 4;
      if (!test(frame.data[at]!, frame.data[at + 1]!, frame.data[at + 2]!)) continue;
      count++;
      left = Math.min(left, x);
      right = Math.max(right, x);
      top = Math.min(top, y);
      bottom = Math.max(bottom, y);
    }
  }
  return { count, left, right, top, bottom };
}

const lit = (r: number, g: number, b: number) => r + g + b > 3 * 24;
const yellow = (r: number, g: number, b: number) => r > 180 && g > 150 && b < 90;

describe("captions in renders", () => {
  it("each cue is on screen from its start frame to the frame before its end", async () => {
    const dir = await blackProject("timing", 1920, 1080, 1);
    const output = join(scratch, "timing.mp4");
    // At 10 fps: the first cue covers frames 2-4; the second starts between frames (0.55 s), so
    // its first frame is 6, and ends on frame 8's time, so 7 is its last.
    const cues = track(
      "1\n00:00:00,200 --> 00:00:00,500\nFirst words\n\n2\n00:00:00,550 --> 00:00:00,800\nSecond\n",
      "t.srt",
    ).cues;
    await renderComposition({
      projectDir: dir,
      output,
      fps: 10,
      thumbnail: false,
      captions: { cues, style: "clean" },
    });
    const shown: boolean[] = [];
    for (let frame = 0; frame < 10; frame++) {
      shown.push(pixels(await decodeFrame(output, frame), lit).count > 200);
    }
    expect(shown).toEqual([false, false, true, true, true, false, true, true, false, false]);
  });

  it("a karaoke word changes colour on its start frame", async () => {
    const dir = await blackProject("karaoke", 1920, 1080, 1);
    const output = join(scratch, "karaoke.mp4");
    const cues = track(
      "WEBVTT\n\n00:00.000 --> 00:01.000\n<00:00.000>SAY <00:00.500>HELLO\n",
      "k.vtt",
    ).cues;
    await renderComposition({
      projectDir: dir,
      output,
      fps: 10,
      thumbnail: false,
      captions: { cues, style: "karaoke" },
    });
    const before = pixels(await decodeFrame(output, 4), yellow);
    const at = pixels(await decodeFrame(output, 5), yellow);
    expect(before.count).toBeGreaterThan(100);
    // "HELLO" joins the lit words on frame 5 (0.5 s), to the right of "SAY".
    expect(at.count).toBeGreaterThan(before.count * 1.5);
    expect(at.right).toBeGreaterThan(before.right + 50);
  });

  it("in 9:16 no caption pixel is in the bottom fifth or the side margins, in any style", async () => {
    const dir = await blackProject("tall", 1080, 1920, 0.2);
    const long =
      "This caption is long enough to need several lines on a phone, with an extraordinarilylongwordthatcannotfit anywhere";
    for (const style of CAPTION_STYLES) {
      const output = join(scratch, `tall-${style}.png`);
      const captions: RenderCaptions = {
        cues: [{ start: 0, end: 1, text: long }],
        style,
        look: { background: "#3050ff" },
      };
      await renderStill({ projectDir: dir, output, time: 0, fps: 10, captions });
      const frame = await decodeFrame(output, 0);
      const box = pixels(frame, lit);
      expect(box.count, style).toBeGreaterThan(1000);
      expect(box.bottom, style).toBeLessThan(frame.height * 0.8);
      // The side margins: 8% of the width (docs/composition-format.md, "Captions").
      expect(box.left, style).toBeGreaterThanOrEqual(Math.floor(frame.width * 0.08));
      expect(box.right, style).toBeLessThan(Math.ceil(frame.width * 0.92));
    }
  });

  // The reference pictures are grey, a quarter of the size, of the caption band; a mirrored or
  // re-broken line differs from them by far more than the limit (see the checks below).
  for (const [name, file, text] of [
    [
      "arabic",
      "arabic.srt",
      "1\n00:00:00,000 --> 00:00:01,000\nمرحبا بكم في الفيديو الجديد، شكراً للمشاهدة والاستماع معنا اليوم\n",
    ],
    [
      "japanese",
      "japanese.srt",
      "1\n00:00:00,000 --> 00:00:01,000\n今日はとても良い天気ですね。一緒に散歩に行きませんか？新しい公園ができました。\n",
    ],
  ] as const) {
    it(`${name} captions keep their order and line breaks`, async () => {
      const dir = await blackProject(name, 1080, 1920, 0.2);
      const output = join(scratch, `${name}.png`);
      const cues = track(text, file).cues;
      await renderStill({
        projectDir: dir,
        output,
        time: 0,
        fps: 10,
        captions: { cues, style: "band" },
      });
      const picture = await bandPicture(output);
      const reference = join(REFERENCES, `${name}.png`);
      // SVC_UPDATE_CAPTION_REFERENCES=1 writes new references (look at them before committing).
      if (process.env.SVC_UPDATE_CAPTION_REFERENCES === "1") {
        await mkdir(REFERENCES, { recursive: true });
        await writeFile(reference, await encodeGrey(picture));
      }
      expect(existsSync(reference), `${reference} is kept with the test`).toBe(true);
      const kept = await decodeGrey(reference);
      expect(meanDifference(picture, kept)).toBeLessThan(3);
      // The check can fail: the same band mirrored (the wrong direction) is far from it.
      expect(meanDifference(mirrored(picture), kept)).toBeGreaterThan(6);
    });
  }
});

const BAND = { x: 0, y: 960, width: 1080, height: 480, scale: 4 };

interface Grey {
  width: number;
  height: number;
  data: Buffer;
}

/** The caption band of a 1080x1920 still, grey, at a quarter of the size. */
async function bandPicture(file: string): Promise<Grey> {
  const ffmpeg = (await resolveFfmpeg()).path;
  const width = BAND.width / BAND.scale;
  const height = BAND.height / BAND.scale;
  const data = execFileSync(ffmpeg, [
    ...["-v", "error", "-i", file],
    ...[
      "-vf",
      `crop=${BAND.width}:${BAND.height}:${BAND.x}:${BAND.y},scale=${width}:${height}:flags=area`,
    ],
    ...["-f", "rawvideo", "-pix_fmt", "gray", "pipe:1"],
  ]);
  return { width, height, data };
}

async function encodeGrey(picture: Grey): Promise<Buffer> {
  const ffmpeg = (await resolveFfmpeg()).path;
  return execFileSync(
    ffmpeg,
    [
      ...["-v", "error", "-f", "rawvideo", "-pix_fmt", "gray"],
      ...["-s", `${picture.width}x${picture.height}`, "-i", "pipe:0"],
      ...["-c:v", "png", "-f", "image2", "pipe:1"],
    ],
    { input: picture.data },
  );
}

async function decodeGrey(file: string): Promise<Grey> {
  const ffmpeg = (await resolveFfmpeg()).path;
  const data = execFileSync(ffmpeg, [
    ...["-v", "error", "-i", file, "-f", "rawvideo", "-pix_fmt", "gray", "pipe:1"],
  ]);
  const probe = readFileSync(file);
  // PNG IHDR: width and height are the big-endian words at bytes 16 and 20.
  return { width: probe.readUInt32BE(16), height: probe.readUInt32BE(20), data };
}

function meanDifference(a: Grey, b: Grey): number {
  expect([a.width, a.height]).toEqual([b.width, b.height]);
  let total = 0;
  for (let at = 0; at < a.data.length; at++) total += Math.abs(a.data[at]! - b.data[at]!);
  return total / a.data.length;
}

function mirrored(picture: Grey): Grey {
  const data = Buffer.alloc(picture.data.length);
  for (let y = 0; y < picture.height; y++) {
    for (let x = 0; x < picture.width; x++) {
      data[y * picture.width + x] = picture.data[y * picture.width + (picture.width - 1 - x)]!;
    }
  }
  return { ...picture, data };
}
