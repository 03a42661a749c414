// Builds the three parts of the desktop app. The preload is one CommonJS file so the renderer
// can run with `sandbox: true` (sandboxed preloads cannot load ES modules or split chunks).
// The frame script (the engine's page runtime plus the player's frame bridge, one classic script)
// is built once by src/main/frame-script.ts and compiled into two places: the renderer's
// <svc-player> (its `svc:frame-script` import, for srcdoc frames) and the main process's preview
// server (src/main/frame-script.ts is replaced by the built text, for served frames), so the app
// needs no sources at run time and both frames run the same bytes.
import { resolve } from "node:path";
import react from "@vitejs/plugin-react";
import { defineConfig, externalizeDepsPlugin } from "electron-vite";
import type { Plugin } from "vite";
import { buildFrameScript } from "./src/main/frame-script";

const SRC_DIR = resolve(__dirname, "src");
let frameScript: Promise<string> | undefined;
const builtFrameScript = () => (frameScript ??= buildFrameScript(SRC_DIR));

/** The renderer's `import FRAME_SCRIPT from "svc:frame-script"`. */
function frameScriptModulePlugin(): Plugin {
  const id = "\0svc:frame-script";
  return {
    name: "svc-frame-script",
    resolveId: (source) => (source === "svc:frame-script" ? id : undefined),
    async load(loaded) {
      if (loaded !== id) return undefined;
      return `export default ${JSON.stringify(await builtFrameScript())};`;
    },
  };
}

/** The main bundle's src/main/frame-script.ts: the built script instead of esbuild at run time. */
function inlineFrameScriptPlugin(): Plugin {
  const file = resolve(SRC_DIR, "main", "frame-script.ts");
  return {
    name: "svc-inline-frame-script",
    enforce: "pre",
    async load(loaded) {
      if (loaded.split("?")[0] !== file) return undefined;
      const text = JSON.stringify(await builtFrameScript());
      return `export function frameScript() { return Promise.resolve(${text}); }`;
    },
  };
}

export default defineConfig({
  main: {
    plugins: [externalizeDepsPlugin(), inlineFrameScriptPlugin()],
    build: {
      outDir: "out/main",
      rollupOptions: { input: { electron: resolve(__dirname, "src/main/electron.ts") } },
    },
  },
  preload: {
    build: {
      outDir: "out/preload",
      rollupOptions: {
        input: { index: resolve(__dirname, "src/preload/index.ts") },
        external: ["electron"],
        output: { format: "cjs", entryFileNames: "[name].cjs", inlineDynamicImports: true },
      },
    },
  },
  renderer: {
    root: resolve(__dirname, "src/renderer"),
    plugins: [react(), frameScriptModulePlugin()],
    build: {
      outDir: "out/renderer",
      rollupOptions: { input: { index: resolve(__dirname, "src/renderer/index.html") } },
    },
  },
});
