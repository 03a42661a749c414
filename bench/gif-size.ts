// npm run bench:gif: the README's size bound for GIFs, checked on its fixed input. Renders
// examples/hello-world (1920x1080, 5 s) as a 30 fps `standard` GIF, as the README's sentence says,
// and fails (exit 1) when the file is over the stated 20 MB. The load average goes with the figure.
//
// A bench rather than a test: the render is 150 full-HD frames plus a palette pass, ~60-100 s on
// this 2-core machine, most of the suite's time budget for one number that moves only when the GIF
// encoder (src/engine/outputs/gif.ts) or the example changes — run it after touching either. The
// GIF's correctness (size, frame count, delays, loop, colours) is tested on small frames in
// src/engine/outputs/outputs.test.ts.
//
// Run: npm run bench:gif [-- --fps 15]
import { mkdtemp, rm, stat } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { renderComposition } from "../src/engine/render";

/** README.md, "Besides videos": a 5 s 1080p GIF of examples/hello-world stays under this. */
const README_BOUND_BYTES = 20_000_000;

const { values } = parseArgs({ options: { fps: { type: "string", default: "30" } } });
const fps = Number(values.fps);
const out = await mkdtemp(join(tmpdir(), "svc-bench-gif-"));
try {
  const loadBefore = loadavg()[0]!;
  const started = performance.now();
  const result = await renderComposition({
    projectDir: resolve(import.meta.dirname, "../examples/hello-world"),
    fps,
    quality: "standard",
    format: "gif",
    resolution: "1080p",
    output: join(out, "hello-world.gif"),
  });
  const seconds = (performance.now() - started) / 1000;
  const bytes = (await stat(result.outputPath)).size;
  const within = bytes < README_BOUND_BYTES;
  console.log(
    `hello-world gif 1080p ${fps} fps standard: ${(bytes / 1e6).toFixed(1)} MB (${bytes} bytes), ` +
      `${result.frames} frames, bound ${README_BOUND_BYTES / 1e6} MB: ${within ? "within" : "OVER"}; ` +
      `rendered in ${seconds.toFixed(1)} s, load ${loadBefore.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)}`,
  );
  if (!within) process.exitCode = 1;
} finally {
  await rm(out, { recursive: true, force: true });
}
