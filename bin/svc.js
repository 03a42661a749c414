#!/usr/bin/env node
// The `svc` command. Runs the CLI from a bundle of its TypeScript sources in out/cli/, which it
// builds with esbuild on the first run and again whenever a file under src/ changes, so
// `npx svc` works right after `npm install` with no build step to remember. Loading one bundle
// starts ~0.2 s sooner than running the sources through tsx (which transforms and resolves every
// module through loader hooks on each start), and every `svc render` pays that start. When the
// bundle cannot be built (a syntax error being edited, a read-only install), the sources run
// through tsx as before, which also reports such errors best.
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const SOURCES = join(ROOT, "src");
const BUNDLES = join(ROOT, "out", "cli");
const STALE_BUNDLE_MS = 60 * 60 * 1000;

/** Changes with any edit, added or removed file under src/, and with the checkout's location. */
function sourceStamp() {
  let sum = 0;
  let count = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else {
        sum += statSync(path).mtimeMs;
        count++;
      }
    }
  };
  walk(SOURCES);
  return createHash("sha256")
    .update(`${ROOT}\n${sum}\n${count}\n${process.version}`)
    .digest("hex")
    .slice(0, 16);
}

/**
 * Each source module keeps its own import.meta.url (the engine finds its runtime, the player and
 * package.json relative to its own file), so the bundle behaves as the sources do.
 */
const keepModuleUrls = {
  name: "keep-module-urls",
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/].*\.tsx?$/ }, (args) => {
      const url = JSON.stringify(pathToFileURL(args.path).href);
      const contents = readFileSync(args.path, "utf8")
        .replaceAll("import.meta.url", url)
        .replaceAll("import.meta.dirname", JSON.stringify(dirname(args.path)))
        .replaceAll("import.meta.filename", JSON.stringify(args.path));
      return { contents, loader: args.path.endsWith("x") ? "tsx" : "ts" };
    });
  },
};

/** Builds the bundle for `stamp` next to its final place and moves it there in one step. */
async function buildBundle(stamp) {
  const { build } = await import("esbuild");
  const target = join(BUNDLES, stamp);
  const temp = `${target}.${process.pid}.tmp`;
  mkdirSync(BUNDLES, { recursive: true });
  try {
    await build({
      entryPoints: [join(SOURCES, "cli", "main.ts")],
      outdir: temp,
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      target: "node20",
      packages: "external",
      logLevel: "silent",
      plugins: [keepModuleUrls],
    });
    try {
      renameSync(temp, target);
    } catch {
      // Another svc built the same bundle at the same moment; theirs is as good.
    }
    // Older bundles go once no svc started from them is likely to load a chunk from them any more.
    for (const name of readdirSync(BUNDLES)) {
      const path = join(BUNDLES, name);
      if (name !== stamp && Date.now() - statSync(path).mtimeMs > STALE_BUNDLE_MS) {
        rmSync(path, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
  return join(target, "main.js");
}

async function bundledCli() {
  if (process.env.SVC_NO_BUNDLE === "1") return undefined;
  try {
    const stamp = sourceStamp();
    const entry = join(BUNDLES, stamp, "main.js");
    return existsSync(entry) ? entry : await buildBundle(stamp);
  } catch {
    return undefined;
  }
}

const entry = await bundledCli();
if (entry) {
  await import(pathToFileURL(entry).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
