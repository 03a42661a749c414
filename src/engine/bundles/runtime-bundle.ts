// Builds the page runtime (src/engine/runtime, browser code) into one classic script that the
// engine installs with `page.addInitScript` before any page script runs. The bundle is built once
// per process with esbuild and kept in memory: every page of every render gets the same bytes, and
// only the small config prefix differs.
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
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

/** The runtime source, built on first use. */
export function runtimeBundle(): Promise<string> {
  const entry = ENTRY_CANDIDATES.find((candidate) => existsSync(candidate)) ?? ENTRY_CANDIDATES[0]!;
  bundlePromise ??= build({ entryPoints: [entry], ...PAGE_SCRIPT_BUILD }).then(
    (result) => {
      const file = result.outputFiles[0];
      if (!file) throw new Error("esbuild produced no output for the page runtime");
      return file.text;
    },
    (error: unknown) => {
      bundlePromise = undefined;
      throw error;
    },
  );
  return bundlePromise;
}

/** The init script for one page: its config followed by the runtime. */
export async function runtimeScript(config: RuntimeConfig): Promise<string> {
  // JSON.stringify alone could end the script early with "</script>" or break on U+2028 in old
  // engines; escaping "<" keeps the text safe wherever it is embedded.
  const json = JSON.stringify(config).replace(/</g, "\\u003c");
  return `window.__svcConfig=${json};\n${await runtimeBundle()}`;
}
