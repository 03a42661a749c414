// Issue 41: the fenced browser's first frame. Opens many capture sessions (a fresh browser, its
// blank page, the first beginFrame that proves the method works: CapturePage.open) with the
// page fence as asked, and counts those whose first frame got no answer.
//
// Run: npx tsx bench/fence-first-frame.ts -- [--opens 100] [--parallel 3] [--timeout 15] [--mode 1]
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { resolveChromium } from "../src/engine/browser/browser";
import { CapturePage } from "../src/engine/browser/capture";

const { values: flags } = parseArgs({
  options: {
    opens: { type: "string", default: "100" },
    parallel: { type: "string", default: "3" },
    timeout: { type: "string", default: "15" },
    mode: { type: "string", default: "1" },
    network: { type: "string", default: "closed" },
    extra: { type: "string", default: "" },
  },
});
process.env.SVC_BROWSER_NAMESPACE = flags.mode;
process.env.SVC_BROWSER_TIMEOUT_SECONDS = flags.timeout;
const browser = await resolveChromium();
const total = Number(flags.opens);
let next = 0;
let ok = 0;
const failures: string[] = [];
const started = Date.now();
async function worker(): Promise<void> {
  while (next < total) {
    const n = next++;
    try {
      const session = await CapturePage.open({
        browser,
        viewport: { width: 1920, height: 1080 },
        deviceScaleFactor: 1,
        transparent: false,
        imageFormat: "jpeg",
        jpegQuality: 92,
        initScript: "",
        projectOrigin: "http://127.0.0.1:9",
        allowNetwork: flags.network === "open",
        ...(flags.extra ? { extraArgs: flags.extra.split(" ") } : {}),
        onPageError: () => undefined,
      });
      await session.close();
      ok++;
    } catch (error) {
      const message = String((error as Error).message).split("\n")[0]!;
      failures.push(`#${n}: ${message}`);
      console.log(`FAIL #${n}: ${message}`);
    }
    if ((n + 1) % 20 === 0)
      console.log(
        `${n + 1}/${total} ok=${ok} failed=${failures.length} load=${loadavg()[0]!.toFixed(1)}`,
      );
  }
}
await Promise.all(Array.from({ length: Number(flags.parallel) }, () => worker()));
console.log(
  JSON.stringify({
    mode: flags.mode,
    network: flags.network,
    extra: flags.extra,
    opens: total,
    ok,
    failed: failures.length,
    seconds: Math.round((Date.now() - started) / 1000),
    load: loadavg().map((l) => l.toFixed(1)),
  }),
);
