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

/**
 * Each folder's doors: the only files other folders may import from it (issue 39). index.ts is
 * the folder's surface; a second door exists where a process must not load the rest (the engine's
 * contract.ts holds no browser code, the service's start.ts is loaded only to start it).
 */
const DOORS = {
  engine: ["index", "contract", "player-assets"],
  server: ["index", "start"],
  core: ["index", "local"],
  node: ["index"],
};

/** no-restricted-imports patterns that keep `layer` out of other folders' internals. */
function doorPatterns(layer) {
  return Object.entries(DOORS)
    .filter(([folder]) => folder !== layer)
    .map(([folder, doors]) => {
      // The player runs the engine's page runtime itself (its own seam, checked above).
      const runtime = layer === "player" && folder === "engine" ? "|runtime/" : "";
      return {
        regex: `^(\\.\\./)+${folder}/(?!(${doors.join("|")})(\\.ts)?$${runtime})`,
        message: `Outside src/${folder}, import it only through its door: ${doors.map((d) => `src/${folder}/${d}.ts`).join(" or ")} (export what you need there).`,
      };
    });
}

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

/**
 * The doors, for production files only (tests and their testing/ helpers may reach inside): a
 * rule of its own, so that the layer patterns above still hold for the helpers.
 */
const doorBlocks = LAYERS.map((layer) => ({
  files: [`src/${layer}/**`],
  ignores: ["**/*.test.ts", "**/*.test.tsx", "**/testing/**"],
  rules: {
    "@typescript-eslint/no-restricted-imports": ["error", { patterns: doorPatterns(layer) }],
  },
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
  ...doorBlocks,
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
