// Issue 41: how often a closed page's browser stalls on beginFrame. Renders many short closed
// pages (stills of the starter templates and examples, and short videos) with the page fence on
// (SVC_BROWSER_NAMESPACE=1) and counts renders that failed with a stalled command. Commands time
// out after --timeout seconds (SVC_BROWSER_TIMEOUT_SECONDS) so a stall costs little.
//
// Run: npx tsx bench/fence-stall.ts -- [--renders 200] [--parallel 2] [--timeout 20] [--mode 1]
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { listStarterTemplates } from "../src/core/gallery";
import { renderStill } from "../src/engine/outputs/still";
import { renderComposition } from "../src/engine/render";
import { closeWarmPages } from "../src/engine/stages/page-pool";

const { values: flags } = parseArgs({
  options: {
    renders: { type: "string", default: "200" },
    parallel: { type: "string", default: "2" },
    timeout: { type: "string", default: "20" },
    mode: { type: "string", default: "1" },
    sandbox: { type: "string", default: "" },
  },
});
process.env.SVC_BROWSER_NAMESPACE = flags.mode;
if (flags.sandbox) process.env.SVC_BROWSER_SANDBOX = flags.sandbox;
process.env.SVC_BROWSER_TIMEOUT_SECONDS = flags.timeout;

const { templates } = await listStarterTemplates();
const projects = [
  ...templates.map((t) => t.dir),
  join(import.meta.dirname, "../examples/hello-world"),
  join(import.meta.dirname, "../examples/gsap-heavy"),
  join(import.meta.dirname, "../examples/lower-third"),
];
const scratch = await mkdtemp(join(tmpdir(), "fence-stall-"));
const total = Number(flags.renders);
let next = 0;
let ok = 0;
/** Renders that completed after svc started a stalled browser again (capture.ts launch). */
let restarted = 0;
process.on("warning", (warning) => {
  if ((warning as { code?: string }).code !== "SVC_BROWSER_RESTARTED") return;
  restarted++;
  console.log(`RESTARTED: ${warning.message}`);
});
const failures: string[] = [];
const started = Date.now();

async function worker(): Promise<void> {
  while (next < total) {
    const n = next++;
    const projectDir = projects[n % projects.length]!;
    const video = n % 5 === 4;
    const t0 = Date.now();
    try {
      if (video) {
        await renderComposition({
          projectDir,
          output: join(scratch, `${n}.mp4`),
          fps: 10,
          quality: "draft",
          workers: 1,
          allowNetwork: false,
          thumbnail: false,
        });
      } else {
        await renderStill({
          projectDir,
          output: join(scratch, `${n}.png`),
          time: (n % 7) * 0.3,
          allowNetwork: false,
        });
      }
      ok++;
    } catch (error) {
      const message = String((error as Error).message ?? error).split("\n")[0]!;
      failures.push(
        `#${n} ${projectDir.split("/").pop()} ${video ? "video" : "still"}: ${message}`,
      );
      console.log(`FAIL #${n} after ${Date.now() - t0} ms: ${message}`);
    }
    if ((n + 1) % 20 === 0)
      console.log(
        `${n + 1}/${total} ok=${ok} restarted=${restarted} failed=${failures.length} load=${loadavg()[0]!.toFixed(1)}`,
      );
  }
}

await Promise.all(Array.from({ length: Number(flags.parallel) }, () => worker()));
await closeWarmPages();
const stalls = failures.filter((f) => /stopped answering|timed out/i.test(f));
console.log(
  JSON.stringify(
    {
      mode: flags.mode,
      renders: total,
      ok,
      restarted,
      failed: failures.length,
      stalls: stalls.length,
      seconds: Math.round((Date.now() - started) / 1000),
      load: loadavg().map((l) => l.toFixed(1)),
      failures,
    },
    null,
    2,
  ),
);
await rm(scratch, { recursive: true, force: true });
