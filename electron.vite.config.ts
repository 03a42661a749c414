// Builds the three parts of the desktop app. The preload is one CommonJS file so the renderer
// can run with `sandbox: true` (sandboxed preloads cannot load ES modules or split chunks).
// The renderer embeds <svc-player>, whose `svc:frame-script` import is the engine's page runtime
// plus the frame bridge as one classic script, built here the way src/engine/player-bundle.ts does.
import { resolve } from "node:path";
import react from "@vitejs/plugin-react";
import { build } from "esbuild";
import { defineConfig, externalizeDepsPlugin } from "electron-vite";
import type { Plugin } from "vite";
import { runtimeBundle } from "./src/engine/runtime-bundle";

function frameScriptPlugin(): Plugin {
  const id = "\0svc:frame-script";
  return {
    name: "svc-frame-script",
    resolveId: (source) => (source === "svc:frame-script" ? id : undefined),
    async load(loaded) {
      if (loaded !== id) return undefined;
      const bridge = await build({
        entryPoints: [resolve(__dirname, "src/player/frame-bridge.ts")],
        bundle: true,
        write: false,
        format: "iife",
        platform: "browser",
        target: "chrome120",
        minify: true,
        legalComments: "none",
        logLevel: "silent",
      });
      const source = `${await runtimeBundle()}\n${bridge.outputFiles[0]!.text}`;
      return `export default ${JSON.stringify(source)};`;
    },
  };
}

export default defineConfig({
  main: {
    plugins: [externalizeDepsPlugin()],
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
    plugins: [react(), frameScriptPlugin()],
    build: {
      outDir: "out/renderer",
      rollupOptions: { input: { index: resolve(__dirname, "src/renderer/index.html") } },
    },
  },
});
