// A composition rendered at another aspect ratio's viewport (docs/composition-format.md): the page
// is laid out at the new size, `data-aspect-ratio` is on <html> and on the root before the page's
// scripts run, and ordinary CSS adapts it. Checked by decoding the pictures.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EngineError } from "../errors";
import { decodeFrame, pixelAt, probeMedia } from "../testing/probe";
import { renderComposition } from "../render";
import { adaptedViewport } from "../stages/render-prepare";
import { renderStill } from "./still";

let scratch: string;
let project: string;

/**
 * Authored at 1920x1080. The box fills the root: red at 16:9, blue at 9:16, green at 1:1 (CSS on
 * the root's attribute); the corner mark is white when the page's first script already saw
 * `data-aspect-ratio` on <html>, black when it did not.
 */
const PAGE = `<!doctype html><html><head><style>
html,body{margin:0;background:#000}
#box{position:absolute;left:0;top:0;width:100%;height:100%;background:#f00}
#root[data-aspect-ratio="9:16"] #box{background:#00f}
[data-aspect-ratio="1:1"] #box{background:#0f0}
#mark{position:absolute;left:0;top:0;width:100px;height:100px;background:#000}
</style><script>window.seenRatio = document.documentElement.getAttribute("data-aspect-ratio");</script>
</head><body>
<div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="0.2">
<div id="box" data-start="0"></div><div id="mark"></div></div>
<script>if (window.seenRatio) document.getElementById("mark").style.background = "#fff";</script>
</body></html>`;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-aspect-test-"));
  project = join(scratch, "project");
  await mkdir(project);
  await writeFile(join(project, "index.html"), PAGE);
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("rendering at another aspect ratio", () => {
  it("keeps the authored short side for the page's viewport", () => {
    expect(adaptedViewport("9:16", { width: 1920, height: 1080 })).toEqual({
      width: 1080,
      height: 1920,
    });
    expect(adaptedViewport("1:1", { width: 1280, height: 720 })).toEqual({
      width: 720,
      height: 720,
    });
    expect(adaptedViewport("16:9", { width: 1080, height: 1920 })).toEqual({
      width: 1920,
      height: 1080,
    });
  });

  it("draws a 9:16 still of a 16:9 composition with the 9:16 CSS applied before scripts ran", async () => {
    const result = await renderStill({
      projectDir: project,
      output: join(scratch, "tall.png"),
      time: 0,
      fps: 10,
      aspectRatio: "9:16",
      adaptAspectRatio: true,
      allowNetwork: false,
    });
    expect([result.width, result.height]).toEqual([1080, 1920]);
    const frame = await decodeFrame(result.outputPath, 0);
    expect([frame.width, frame.height]).toEqual([1080, 1920]);
    // The box fills the whole 1080x1920 root (blue), and the first script saw the attribute.
    expect(pixelAt(frame, 540, 1900).slice(0, 3)).toEqual([0, 0, 255]);
    expect(pixelAt(frame, 1070, 960).slice(0, 3)).toEqual([0, 0, 255]);
    expect(pixelAt(frame, 50, 50).slice(0, 3)).toEqual([255, 255, 255]);
  });

  it("renders a 1:1 mp4 of a 16:9 composition, and the authored ratio as before", async () => {
    const square = await renderComposition({
      projectDir: project,
      output: join(scratch, "square.mp4"),
      fps: 10,
      aspectRatio: "1:1",
      adaptAspectRatio: true,
      allowNetwork: false,
      thumbnail: false,
    });
    const video = (file: string) =>
      probeMedia(file).then((info) => info.streams.find((stream) => stream.type === "video"));
    expect(await video(square.outputPath)).toMatchObject({ width: 1080, height: 1080 });
    const frame = await decodeFrame(square.outputPath, 1);
    const [r, g, b] = pixelAt(frame, 900, 900);
    expect(g).toBeGreaterThan(200);
    expect(Math.max(r, b)).toBeLessThan(40);

    const wide = await renderComposition({
      projectDir: project,
      output: join(scratch, "wide.mp4"),
      fps: 10,
      allowNetwork: false,
      thumbnail: false,
    });
    expect(await video(wide.outputPath)).toMatchObject({ width: 1920, height: 1080 });
    const [wr, wg, wb] = pixelAt(await decodeFrame(wide.outputPath, 1), 1800, 900);
    expect(wr).toBeGreaterThan(200);
    expect(Math.max(wg, wb)).toBeLessThan(40);
  });

  it("still refuses another aspect ratio unless asked to adapt", async () => {
    const error = await renderComposition({
      projectDir: project,
      output: join(scratch, "refused.mp4"),
      aspectRatio: "9:16",
      allowNetwork: false,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).code).toBe("aspect_mismatch");
  });
});
