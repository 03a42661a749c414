// The picture formats, rendered with real Chromium and FFmpeg and checked by decoding: a GIF's
// size, frame count, frame delays, loop flag and colours; a PNG sequence's names, sizes, timing
// and alpha.
import { readFileSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import yauzl from "yauzl";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineError } from "../errors";
import { resolveFfprobe } from "../ffmpeg/ffmpeg";
import { decodeFrame, pixelAt, probeMedia } from "../testing/probe";
import { renderComposition } from "../render";
import { frameDigits } from "./png-sequence";
import { renderStill } from "./still";

let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-outputs-test-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/**
 * 1080x1080, 1 s: a 200 px square at x = 100 * (t * 10) px (one step per frame at 10 fps), red
 * for the first half second and blue after, drawn from the page's clock (which follows the frame
 * time in renders); the page background is `background`.
 */
async function steppingSquare(background: string): Promise<string> {
  const dir = join(scratch, `square-${background.replace(/\W/g, "")}`);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "index.html"),
    `<!doctype html><html><head><style>html,body{margin:0;background:${background}}
#sq{position:absolute;top:400px;width:200px;height:200px;background:#f00}</style></head><body>
<div id="root" data-composition-id="main" data-width="1080" data-height="1080" data-duration="1"
 style="position:relative;width:1080px;height:1080px;overflow:hidden"><div id="sq"></div></div>
<script>
  const sq = document.getElementById("sq");
  const draw = (t) => {
    const step = Math.round(t * 10);
    sq.style.left = step * 100 + "px";
    sq.style.background = step < 5 ? "#f00" : "#00f";
  };
  draw(0);
  const tick = () => { draw(performance.now() / 1000); requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
</script></body></html>`,
  );
  return dir;
}

function zipEntries(file: string): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      const entries = new Map<string, Buffer>();
      zip.on("entry", (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError) return reject(streamError);
          const chunks: Buffer[] = [];
          stream.on("data", (chunk: Buffer) => chunks.push(chunk));
          stream.on("end", () => {
            entries.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on("end", () => resolve(entries));
      zip.on("error", reject);
      zip.readEntry();
    });
  });
}

describe("gif output", () => {
  let gif: string;

  beforeAll(async () => {
    const dir = await steppingSquare("#fff");
    gif = (
      await renderComposition({
        projectDir: dir,
        output: join(scratch, "out", "square.gif"),
        format: "gif",
        fps: 10,
        allowNetwork: false,
      })
    ).outputPath;
  });

  it("has the output size, one frame per render frame, and delays that add up to the duration", async () => {
    const info = await probeMedia(gif, { countFrames: true });
    expect(info.streams[0]).toMatchObject({ codec: "gif", width: 1080, height: 1080, frames: 10 });
    const ffprobe = await resolveFfprobe();
    const delays = execFileSync(ffprobe.path, [
      ...["-v", "error", "-select_streams", "v", "-show_entries", "packet=duration_time"],
      ...["-of", "csv=p=0", gif],
    ])
      .toString()
      .trim()
      .split("\n")
      .map(Number);
    expect(delays).toEqual(Array(10).fill(0.1));
  });

  it("loops forever (NETSCAPE2.0 block with a loop count of 0)", () => {
    const bytes = readFileSync(gif);
    const at = bytes.indexOf("NETSCAPE2.0");
    expect(at).toBeGreaterThan(0);
    // sub-block: size 3, id 1, loop count (little endian)
    expect([...bytes.subarray(at + 11, at + 15)]).toEqual([3, 1, 0, 0]);
  });

  it("draws each frame at its time in the render's colours", async () => {
    // A 256-colour palette with dithering: close to the page's colours, not exact.
    const near = (rgb: readonly number[], expected: readonly number[]) =>
      rgb.slice(0, 3).every((v, i) => Math.abs(v - expected[i]!) < 24);
    for (const [frame, colour] of [
      [2, [255, 0, 0]],
      [7, [0, 0, 255]],
    ] as const) {
      const decoded = await decodeFrame(gif, frame);
      expect(near(pixelAt(decoded, frame * 100 + 100, 500), colour)).toBe(true);
      expect(near(pixelAt(decoded, frame * 100 + 100, 200), [255, 255, 255])).toBe(true);
      // The square is where this frame puts it, not one step earlier or later.
      expect(near(pixelAt(decoded, frame * 100 - 20, 500), [255, 255, 255])).toBe(true);
      expect(near(pixelAt(decoded, frame * 100 + 220, 500), [255, 255, 255])).toBe(true);
    }
    expect(readFileSync(gif.replace(/\.gif$/, ".thumbnail.jpg")).length).toBeGreaterThan(0);
  });

  it("refuses more than 50 fps before rendering", async () => {
    const error = await renderComposition({
      projectDir: await steppingSquare("#fff"),
      output: join(scratch, "out", "fast.gif"),
      format: "gif",
      fps: 60,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).code).toBe("invalid_options");
    expect((error as EngineError).message).toMatch(/at most 50 fps/);
  });
});

describe("png-sequence output", () => {
  it("zips one numbered RGBA PNG per frame, transparent where the page is", async () => {
    const dir = await steppingSquare("transparent");
    const result = await renderComposition({
      projectDir: dir,
      output: join(scratch, "out", "square.zip"),
      format: "png-sequence",
      fps: 10,
      allowNetwork: false,
    });
    expect(result.warnings.filter((w) => /does not end in/.test(w))).toEqual([]);
    const entries = await zipEntries(result.outputPath);
    expect([...entries.keys()]).toEqual(Array.from({ length: 10 }, (_, i) => `frame_0000${i}.png`));
    const pngDir = join(scratch, "pngs");
    await mkdir(pngDir, { recursive: true });
    for (const frame of [3, 8]) {
      const file = join(pngDir, `f${frame}.png`);
      writeFileSync(file, entries.get(`frame_0000${frame}.png`)!);
      const info = await probeMedia(file);
      expect(info.streams[0]).toMatchObject({ codec: "png", width: 1080, height: 1080 });
      const decoded = await decodeFrame(file, 0);
      expect(pixelAt(decoded, 20, 20)[3]).toBe(0);
      const inside = pixelAt(decoded, frame * 100 + 100, 500);
      expect(inside).toEqual(frame < 5 ? [255, 0, 0, 255] : [0, 0, 255, 255]);
      // The square is where frame `frame` puts it, not one step earlier or later.
      expect(pixelAt(decoded, frame * 100 - 20, 500)[3]).toBe(0);
      expect(pixelAt(decoded, frame * 100 + 220, 500)[3]).toBe(0);
    }
    expect(await readdir(join(scratch, "out"))).not.toContainEqual(
      expect.stringMatching(/partial/),
    );
  });

  it("numbers frames with as many digits as the last frame needs, at least five", () => {
    expect(frameDigits(10)).toBe(5);
    expect(frameDigits(100_000)).toBe(5);
    expect(frameDigits(100_001)).toBe(6);
  });
});

describe("stills", () => {
  it("draws the frame at the time, rounded to a frame, as PNG with alpha, JPEG and WebP", async () => {
    const dir = await steppingSquare("transparent");
    for (const [name, alpha] of [
      ["poster.png", true],
      ["poster.jpg", false],
      ["poster.webp", true],
    ] as const) {
      const result = await renderStill({
        projectDir: dir,
        output: join(scratch, "stills", name),
        time: 0.34,
        fps: 10,
        allowNetwork: false,
      });
      expect(result).toMatchObject({ frame: 3, timeSeconds: 0.3, width: 1080, height: 1080 });
      const decoded = await decodeFrame(result.outputPath, 0);
      expect([decoded.width, decoded.height]).toEqual([1080, 1080]);
      const [r, g, b, a] = pixelAt(decoded, 400, 500);
      expect(r).toBeGreaterThan(230);
      expect([g, b].every((v) => v < 25)).toBe(true);
      expect(a).toBe(255);
      // Left of the square at frame 3 (x = 300): transparent where the page is, except in JPEG.
      expect(pixelAt(decoded, 280, 500)[3]).toBe(alpha ? 0 : 255);
      expect(pixelAt(decoded, 520, 500)[3]).toBe(alpha ? 0 : 255);
    }
  });

  it("refuses a time past the end and writes nothing", async () => {
    const dir = await steppingSquare("#fff");
    const error = await renderStill({
      projectDir: dir,
      output: join(scratch, "late", "late.png"),
      time: 3,
      allowNetwork: false,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).message).toMatch(/lasts 1 s; there is no frame at 3 s/);
    expect(await readdir(join(scratch, "late")).catch(() => [])).toEqual([]);
  });
});
