// Builds the page runtime (src/engine/runtime, browser code) into one classic script that the
// engine installs with `page.addInitScript` before any page script runs. The bundle is built once
// per process with esbuild and kept in memory: every page of every render gets the same bytes, and
// only the small config prefix differs. The built text is also kept on disk (the user's cache
// folder) with the size and time of every file it was built from, so a new `svc render` process
// whose sources did not change reads it instead of building it again (~0.25 s of CPU per start).
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build, version as esbuildVersion } from "esbuild";
import { cacheRoot } from "../browser/browser";
import type { PageCaptions } from "../../shared/captions";
import { PAGE_SCRIPT_BUILD } from "../../shared/script-build";

/** What the runtime needs to know before the page starts. */
export interface RuntimeConfig {
  /** Variable values for the root composition (validated by the caller; defaults merged in-page). */
  variables: Record<string, unknown>;
  /** Wall-clock time at virtual time 0, in Unix ms. Default 1704067200000 (2024-01-01T00:00:00Z). */
  epochMs?: number;
  /** Previews only: where the serving page answers CDN URLs (src/shared/frame-document.ts). */
  libraryBase?: string;
  /** Renders: the output's aspect ratio and the page's viewport (runtime/aspect.ts). */
  aspect?: { ratio: string; width: number; height: number };
  /** Captions drawn on top of the composition (runtime/captions.ts). */
  captions?: PageCaptions;
  /** Renders: the output frame rate (runtime/video-time.ts). */
  fps?: number;
}

const HERE = dirname(fileURLToPath(import.meta.url));
/** Beside this folder when run from source; from the package root when this module was bundled. */
const ENTRY_CANDIDATES = [
  join(HERE, "..", "runtime", "index.ts"),
  join(HERE, "..", "..", "src", "engine", "runtime", "index.ts"),
  join(HERE, "..", "src", "engine", "runtime", "index.ts"),
  join(process.cwd(), "src", "engine", "runtime", "index.ts"),
];

let bundlePromise: Promise<string> | undefined;

/** The runtime source, built on first use (or read from the cache, when its sources are unchanged). */
export function runtimeBundle(): Promise<string> {
  const entry = ENTRY_CANDIDATES.find((candidate) => existsSync(candidate)) ?? ENTRY_CANDIDATES[0]!;
  bundlePromise ??= cachedOrBuilt(entry).catch((error: unknown) => {
    bundlePromise = undefined;
    throw error;
  });
  return bundlePromise;
}

/** A built runtime on disk: the files it came from, each with its size and time, and the text. */
interface CachedBundle {
  inputs: [path: string, size: number, mtimeMs: number][];
  text: string;
}

function cacheFile(entry: string): string {
  const key = createHash("sha256")
    .update(JSON.stringify([entry, esbuildVersion, PAGE_SCRIPT_BUILD]))
    .digest("hex")
    .slice(0, 16);
  return join(cacheRoot(), "page-runtime", `${key}.json`);
}

async function fileStamp(path: string): Promise<[string, number, number] | undefined> {
  try {
    const info = await stat(path);
    return [path, info.size, info.mtimeMs];
  } catch {
    return undefined;
  }
}

async function cachedOrBuilt(entry: string): Promise<string> {
  const file = cacheFile(entry);
  try {
    const cached = JSON.parse(await readFile(file, "utf8")) as CachedBundle;
    const now = await Promise.all(cached.inputs.map(([path]) => fileStamp(path)));
    const same = cached.inputs.every(
      ([, size, mtimeMs], i) => now[i]?.[1] === size && now[i]?.[2] === mtimeMs,
    );
    if (same && typeof cached.text === "string") return cached.text;
  } catch {
    // no cache yet, or an unreadable one: build
  }
  const result = await build({ entryPoints: [entry], ...PAGE_SCRIPT_BUILD, metafile: true });
  const text = result.outputFiles[0]?.text;
  if (text === undefined) throw new Error("esbuild produced no output for the page runtime");
  // Stamps taken after the build: a file saved during it makes the next process build again.
  const stamps = await Promise.all(
    Object.keys(result.metafile.inputs).map((input) => fileStamp(resolve(input))),
  );
  if (stamps.every((stamp) => stamp !== undefined)) {
    await saveCache(file, { inputs: stamps, text });
  }
  return text;
}

/** Written beside its place and renamed, so a reader never sees half of it; a failure only costs speed. */
async function saveCache(file: string, bundle: CachedBundle): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(temp, JSON.stringify(bundle));
    await rename(temp, file);
  } catch {
    await rm(temp, { force: true }).catch(() => undefined);
  }
}

/** The init script for one page: its config followed by the runtime. */
export async function runtimeScript(config: RuntimeConfig): Promise<string> {
  // JSON.stringify alone could end the script early with "</script>" or break on U+2028 in old
  // engines; escaping "<" keeps the text safe wherever it is embedded.
  const json = JSON.stringify(config).replace(/</g, "\\u003c");
  return `window.__svcConfig=${json};\n${await runtimeBundle()}`;
}
