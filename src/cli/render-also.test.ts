// `svc render --also`: the main file and the extra ones named next to it, each at its own size
// (decoded), a still at its time; a bad token refused naming --also before anything renders.
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeFrame, probeMedia } from "../engine/testing/probe";
import { recordingIo } from "./io";
import { runRender } from "./render";
import { readAlsoOption } from "./options";
import { UsageError } from "./errors";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-render-also-test-"));
  await mkdir(join(dir, "project"));
  await writeFile(
    join(dir, "project", "index.html"),
    `<!doctype html><html><body style="margin:0;background:#123">
<div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="0.6">
<div style="width:100px;height:100px;background:#fa0"></div></div></body></html>`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("svc render --also", () => {
  it("renders the main file, a 1:1 mp4 and a WebP still next to it", async () => {
    const settings = { fps: 5, format: "mp4" as const, resolution: "1080p" as const };
    const io = recordingIo(process.env);
    const result = await runRender(
      {
        dir: join(dir, "project"),
        output: join(dir, "out", "promo.mp4"),
        composition: "index.html",
        quality: "draft",
        workers: 1,
        ...settings,
        also: readAlsoOption("1:1,still@0.4:webp", settings),
        json: true,
      },
      io,
    );
    expect(result.files?.map((file) => [file.output_path, file.width, file.height])).toEqual([
      [join(dir, "out", "promo.mp4"), 1920, 1080],
      [join(dir, "out", "promo-1x1.mp4"), 1080, 1080],
      [join(dir, "out", "promo-0.4s.webp"), 1920, 1080],
    ]);
    expect((await readdir(join(dir, "out"))).sort()).toEqual([
      "promo-0.4s.webp",
      "promo-1x1.mp4",
      "promo.mp4",
      "promo.thumbnail.jpg",
    ]);
    const square = (await probeMedia(join(dir, "out", "promo-1x1.mp4"))).streams.find(
      (s) => s.type === "video",
    );
    expect(square).toMatchObject({ width: 1080, height: 1080 });
    const still = await decodeFrame(join(dir, "out", "promo-0.4s.webp"), 0);
    expect([still.width, still.height]).toEqual([1920, 1080]);
    const printed = JSON.parse(io.out());
    expect(printed.outputs).toHaveLength(3);
    expect(printed.outputs[2]).toMatchObject({ kind: "still", format: "webp", time: 0.4 });
  });

  it("refuses a token it cannot read, or an output the rules refuse, naming --also", () => {
    const settings = { fps: 60, format: "mp4" as const, resolution: "1080p" as const };
    expect(() => readAlsoOption("9:16,square", settings)).toThrow(UsageError);
    expect(() => readAlsoOption("9:16,square", settings)).toThrow(/--also: "square" is not/);
    expect(() => readAlsoOption("9:16,gif", settings)).toThrow(
      /--also gif: a gif plays at most 50 fps/,
    );
  });
});
