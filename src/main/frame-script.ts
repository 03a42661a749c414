// The script a served composition frame starts with: the engine's page runtime followed by
// <svc-player>'s frame bridge, as one classic script (what the player inlines into its srcdoc
// frames as `svc:frame-script`). src/main may not import the engine, so both are built from their
// sources by path with esbuild, with the engine's options (src/shared/script-build.ts). The Electron main
// bundle gets the result inlined at build time (electron.vite.config.ts replaces this module, and
// uses `buildFrameScript` for the renderer's `svc:frame-script` too), so the built app needs no
// sources; web mode (tsx) and the tests build it once per process on first use.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { PAGE_SCRIPT_BUILD } from "../shared/script-build";

const SRC_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");

async function classicScript(entry: string): Promise<string> {
  const result = await build({ entryPoints: [entry], ...PAGE_SCRIPT_BUILD });
  const file = result.outputFiles[0];
  if (!file) throw new Error(`esbuild produced no output for ${entry}`);
  return file.text;
}

/** Builds the frame script from the sources under `srcDir` (the repository's src/). */
export async function buildFrameScript(srcDir = SRC_DIR): Promise<string> {
  const [runtime, bridge] = await Promise.all([
    classicScript(join(srcDir, "engine", "runtime", "index.ts")),
    classicScript(join(srcDir, "player", "frame-bridge.ts")),
  ]);
  return `${runtime}\n${bridge}`;
}

let built: Promise<string> | undefined;

/** The frame script, built on first use. */
export function frameScript(): Promise<string> {
  built ??= buildFrameScript().catch((error: unknown) => {
    built = undefined;
    throw error;
  });
  return built;
}
