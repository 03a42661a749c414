// Builds every image the container tests use (buildAllImages) and writes how long it took as JSON
// to the file named on the command line, for images-global-setup.ts to read instead of building.
// `npm test` (scripts/test.mjs) runs it in the background from its start, so the builds' waits
// on Debian's and npm's registries and their single-threaded steps overlap the unit and e2e tests
// instead of coming after them (issue 36: CI under 35 minutes on a fresh machine).
//
//   npx tsx deploy/container/build-images.ts OUT.json
//
// Exit codes: 0 built (OUT.json written), 1 a build failed (the output says which), 3 podman
// cannot run here (nothing built; the container tests then skip, or fail in CI, saying why).
import { readFile, writeFile } from "node:fs/promises";
import { buildAllImages, podmanUnavailable } from "./podman";

const out = process.argv[2];
if (!out) {
  process.stderr.write("usage: tsx deploy/container/build-images.ts OUT.json\n");
  process.exit(2);
}
const unavailable = podmanUnavailable();
if (unavailable) {
  process.stderr.write(`images: not built in the background: ${unavailable}\n`);
  process.exit(3);
}
const controller = new AbortController();
// Stopped with npm test (a failed phase, Ctrl-C): podman's build is ended, not left running.
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
  process.on(signal, () => controller.abort(new Error(`stopped by ${signal}`)));
}
const started = Date.now();
try {
  const seconds = await buildAllImages(controller.signal);
  const load = (await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).join(" ");
  const total = Math.round((Date.now() - started) / 1000);
  await writeFile(out, JSON.stringify({ seconds, total, load }));
  process.stderr.write(`images: built in ${total} s (load ${load})\n`);
} catch (error) {
  process.stderr.write(`images: the build failed: ${(error as Error).message}\n`);
  process.exit(controller.signal.aborted ? 143 : 1);
}
