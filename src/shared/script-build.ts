// How the scripts that run inside composition pages are built with esbuild (the engine's page
// runtime, the player's frame bridge): one classic minified script for the Chromium we ship.
// Shared so the engine and the app's preview server build byte-identical scripts.
export const PAGE_SCRIPT_BUILD = {
  bundle: true,
  write: false,
  format: "iife",
  platform: "browser",
  target: "chrome120",
  minify: true,
  legalComments: "none",
  logLevel: "silent",
  // The runtime's bundled fonts (runtime/font-files.ts) are inlined as base64 text.
  loader: { ".woff2": "base64" },
} as const;
