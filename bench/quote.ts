// The quote's estimated time against the measured time of the same render: for each example, the
// cost of a few sampled frames (engine/quote.ts) gives the estimate (shared/quote.ts), then the
// composition is rendered as `svc render` renders it (workers auto) and timed. The bar is
// within +-30% on this machine; the machine is shared, so the load average goes with each row.
//
// Run: npx tsx bench/quote.ts [--examples hello-world,lower-third] [--fps 30] [--format mp4]
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { sampleRenderCost } from "../src/engine/inspect/quote";
import { renderComposition } from "../src/engine/render";
import type { OutputFormat } from "../src/shared/render-options";

const { values } = parseArgs({
  options: {
    examples: { type: "string", default: "hello-world,lower-third,multi-scene,gsap-heavy" },
    fps: { type: "string", default: "30" },
    format: { type: "string", default: "mp4" },
  },
});
const fps = Number(values.fps);
const format = values.format as OutputFormat;
const out = await mkdtemp(join(tmpdir(), "svc-bench-quote-"));
console.log("example          frames  ms/frame  estimate_s  measured_s  ratio  load");
try {
  for (const name of values.examples.split(",")) {
    const projectDir = resolve("examples", name);
    const sampled = await sampleRenderCost({ projectDir, fps, format, allowNetwork: true });
    const started = performance.now();
    await renderComposition({
      projectDir,
      fps,
      format,
      workers: "auto",
      output: join(out, `${name}.${format === "png-sequence" ? "zip" : format}`),
    });
    const measured = (performance.now() - started) / 1000;
    const ratio = sampled.estimatedLocalSeconds / measured;
    console.log(
      [
        name.padEnd(16),
        String(sampled.frames).padStart(6),
        sampled.cost.msPerFrame.toFixed(0).padStart(9),
        sampled.estimatedLocalSeconds.toFixed(1).padStart(11),
        measured.toFixed(1).padStart(11),
        ratio.toFixed(2).padStart(6),
        loadavg()[0]!.toFixed(1).padStart(5),
      ].join(" "),
    );
  }
} finally {
  await rm(out, { recursive: true, force: true });
}
