// Builds the <svc-player> ES module for the browser: src/player with the page runtime and the
// frame bridge inlined as the script it injects into the composition frame. Built once per
// process with esbuild and kept in memory (tests, the desktop app's preview and the template
// serve it as /svc-player.js).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { PAGE_SCRIPT_BUILD } from "../../shared/script-build";
import { runtimeBundle } from "./runtime-bundle";

const PLAYER_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "player");

let modulePromise: Promise<string> | undefined;

async function bundle(
  entry: string,
  format: "iife" | "esm",
  plugins: Parameters<typeof build>[0]["plugins"] = [],
): Promise<string> {
  const result = await build({ entryPoints: [entry], ...PAGE_SCRIPT_BUILD, format, plugins });
  const file = result.outputFiles[0];
  if (!file) throw new Error(`esbuild produced no output for ${entry}`);
  return file.text;
}

/** The player module's source text. */
export function playerModule(): Promise<string> {
  modulePromise ??= (async () => {
    const frameScript =
      (await runtimeBundle()) + "\n" + (await bundle(join(PLAYER_DIR, "frame-bridge.ts"), "iife"));
    return bundle(join(PLAYER_DIR, "index.ts"), "esm", [
      {
        name: "svc-frame-script",
        setup(builder) {
          builder.onResolve({ filter: /^svc:frame-script$/ }, () => ({
            path: "frame-script",
            namespace: "svc",
          }));
          builder.onLoad({ filter: /.*/, namespace: "svc" }, () => ({
            contents: `export default ${JSON.stringify(frameScript)};`,
            loader: "js",
          }));
        },
      },
    ]);
  })().catch((error: unknown) => {
    modulePromise = undefined;
    throw error;
  });
  return modulePromise;
}
