// Lint rules, including the import boundaries of SPEC.md section 1: each folder under src/ is a
// process or layer boundary, and an import that crosses the wrong way fails `npm test`.
import { builtinModules } from "node:module";
import js from "@eslint/js";
import globals from "globals";
import { createNodeResolver, importX } from "eslint-plugin-import-x";
import tseslint from "typescript-eslint";

const LAYERS = [
  "shared",
  "node",
  "core",
  "engine",
  "player",
  "server",
  "cli",
  "main",
  "preload",
  "renderer",
];

/** What each layer may import from the others (SPEC.md section 1, "Dependency direction"). */
const ALLOWED = {
  shared: [],
  node: ["shared"],
  core: ["shared", "node"],
  engine: ["shared", "node"],
  player: ["shared", "engine/runtime"],
  server: ["shared", "node", "engine"],
  cli: ["shared", "node", "core", "engine", "server"],
  main: ["shared", "node", "core"],
  preload: ["shared"],
  renderer: ["shared", "player"],
};

const nodeBuiltins = builtinModules.filter((name) => !name.startsWith("_"));

/** no-restricted-imports options for one folder. */
function boundaries(layer, { node, electron, label = `src/${layer}` }) {
  const allowed = ALLOWED[layer];
  const forbidden = LAYERS.filter(
    (other) => other !== layer && !allowed.some((a) => a === other || a.startsWith(`${other}/`)),
  );
  const patterns = [];
  if (forbidden.length > 0) {
    patterns.push({
      regex: `^(\\.\\./)+(${forbidden.join("|")})(/|$)`,
      message: `src/${layer} may import only from ${allowed.map((a) => `src/${a}`).join(", ") || "itself"} (SPEC.md section 1).`,
    });
  }
  if (layer === "player") {
    // The player may use the engine's browser runtime, never the Node side of the engine.
    patterns.push({
      regex: "^(\\.\\./)+engine/(?!runtime(/|$))",
      message: "src/player may import only src/engine/runtime from the engine.",
    });
  }
  if (!node) {
    patterns.push({
      regex: `^(node:.*|${nodeBuiltins.map((n) => n.replace(/[/.]/g, "\\$&")).join("|")})(/.*)?$`,
      message: `${label} runs without Node APIs (SPEC.md section 1).`,
    });
  }
  if (!electron) {
    patterns.push({
      regex: "^electron(/|$)",
      message: "Only src/main/electron* and src/preload may import electron.",
    });
  }
  return ["error", { patterns }];
}

const layerBlocks = [
  { files: ["src/shared/**"], layer: "shared", node: false, electron: false },
  { files: ["src/node/**"], layer: "node", node: true, electron: false },
  { files: ["src/core/**"], layer: "core", node: true, electron: false },
  { files: ["src/engine/**"], layer: "engine", node: true, electron: false },
  {
    files: ["src/engine/runtime/**"],
    layer: "engine",
    node: false,
    electron: false,
    label: "src/engine/runtime (browser code)",
  },
  { files: ["src/player/**"], layer: "player", node: false, electron: false },
  { files: ["src/server/**"], layer: "server", node: true, electron: false },
  { files: ["src/cli/**"], layer: "cli", node: true, electron: false },
  { files: ["src/main/**"], layer: "main", node: true, electron: false },
  { files: ["src/main/electron*"], layer: "main", node: true, electron: true },
  { files: ["src/preload/**"], layer: "preload", node: false, electron: true },
  { files: ["src/renderer/**"], layer: "renderer", node: false, electron: false },
].map(({ files, layer, node, electron, label }) => ({
  files,
  ignores: files[0].endsWith("**") ? ["**/*.test.ts", "**/*.test.tsx"] : [],
  rules: { "no-restricted-imports": boundaries(layer, { node, electron, label }) },
}));

export default tseslint.config(
  {
    ignores: [
      "node_modules/**",
      "out/**",
      "dist/**",
      "release/**",
      "coverage/**",
      "test-results/**",
      "playwright-report/**",
      "examples/**",
      "templates/**/public/**",
      // Bench output, and the catalog sweep's third-party projects (bench/compat/build-corpus.ts --all).
      "bench/results/**",
      "bench/reference/install/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": ["error", { allow: ["warn", "error"] }],
    },
  },
  {
    // Entry points print to the terminal on purpose.
    files: ["src/cli/**", "scripts/**", "bench/**", "bin/**", "e2e/**", "templates/**"],
    rules: { "no-console": "off" },
  },
  ...layerBlocks,
  {
    // No import circle anywhere in src/: a module and the modules it imports form a tree, so each
    // can be read (and loaded) before the ones that use it.
    files: ["src/**/*.ts", "src/**/*.tsx"],
    plugins: { "import-x": importX },
    settings: {
      "import-x/extensions": [".ts", ".tsx", ".js"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts", ".tsx"] },
      "import-x/resolver-next": [
        createNodeResolver({ extensions: [".ts", ".tsx", ".js", ".d.ts"] }),
      ],
    },
    rules: { "import-x/no-cycle": ["error", { ignoreExternal: true }] },
  },
);
