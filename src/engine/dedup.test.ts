// Frames that did not change are not captured, sent or decoded again: the encoder repeats the
// previous picture. These tests render every example with and without that, and the decoded
// videos must be identical frame for frame (same count, same pixels).
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { frameHashes, probeMedia } from "./probe";
import { renderComposition } from "./render";
import type { RenderCompositionOptions } from "./types";

const EXAMPLES = resolve(import.meta.dirname, "../../examples");
let out: string;

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), "svc-dedup-"));
});

afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

async function renderBoth(
  name: string,
  options: Partial<RenderCompositionOptions>,
  projectDir = join(EXAMPLES, name),
) {
  const format = options.format ?? "mp4";
  const base = {
    projectDir,
    fps: 6,
    quality: "draft" as const,
    allowNetwork: false,
    thumbnail: false,
    ...options,
  };
  const deduped = await renderComposition({ ...base, output: join(out, `${name}-on.${format}`) });
  const full = await renderComposition(
    { ...base, output: join(out, `${name}-off.${format}`) },
    { noDedup: true },
  );
  return { deduped, full };
}

/** A page whose card slides in for 0.5 s and then holds still until 1.5 s. */
async function holdProject(background: string): Promise<string> {
  const projectDir = join(out, `hold-${background.replace(/\W/g, "")}`);
  await mkdir(projectDir, { recursive: true });
  await writeFile(
    join(projectDir, "index.html"),
    `<!doctype html><html><head><style>html,body{margin:0;background:${background}}</style></head><body>
<div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="1.5"
 style="position:relative;width:1920px;height:1080px;overflow:hidden">
 <div id="card" style="position:absolute;left:200px;top:300px;width:600px;height:300px;border-radius:40px;background:rgba(220,40,90,0.8)"></div>
</div>
<script src="https://cdn.jsdelivr.net/npm/gsap@3.15.0/dist/gsap.min.js"></script>
<script>
  const tl = gsap.timeline({ paused: true });
  tl.from("#card", { x: 600, opacity: 0, duration: 0.5 }).set({}, {}, 1.5);
  window.__timelines = { main: tl };
</script></body></html>`,
  );
  return projectDir;
}

describe("repeating unchanged frames", () => {
  it.each([
    "hello-world",
    "lower-third",
    "alpha-overlay",
    "with-audio",
    "multi-scene",
    "gsap-heavy",
  ])("%s decodes to the same frames with and without", { timeout: 300_000 }, async (name) => {
    const { deduped, full } = await renderBoth(name, {});
    expect(full.repeatedFrames).toBe(0);
    const [on, off] = await Promise.all([
      frameHashes(deduped.outputPath),
      frameHashes(full.outputPath),
    ]);
    expect(on).toHaveLength(deduped.frames);
    expect(on).toEqual(off);
  });

  it.each([
    ["mp4", "#102030"],
    ["webm", "transparent"],
  ] as const)(
    "repeats held frames in %s (JPEG and PNG capture) and decodes the same",
    { timeout: 300_000 },
    async (format, background) => {
      const projectDir = await holdProject(background);
      const { deduped, full } = await renderBoth("hold", { format }, projectDir);
      // 9 frames at 6 fps in segments of 6 and 3; the card stops at frame 3, so frames 4-8 hold,
      // and all but frame 6 (a segment starts with a picture) repeat.
      expect(deduped.repeatedFrames).toBe(4);
      const info = await probeMedia(deduped.outputPath, { countFrames: true });
      expect(info.streams[0]).toMatchObject({ frames: 9 });
      if (format === "webm") expect(info.streams[0]?.hasAlpha).toBe(true);
      expect(await frameHashes(deduped.outputPath)).toEqual(await frameHashes(full.outputPath));
    },
  );
});
