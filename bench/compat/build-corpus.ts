// Writes the compatibility corpus (bench/compat/projects/<name>/ and bench/compat/corpus.json)
// from the reference renderer's public catalog (github.com/heygen-com/hyperframes, Apache-2.0) at
// a fixed commit, read from a bare git mirror. Each item becomes a small project laid out the way
// the reference's own catalog previews render it (scripts/generate-catalog-previews.ts):
// - a block is installed at its registry target (compositions/<name>.html, assets beside) and
//   hosted by an index.html that mounts it with data-composition-src, as the catalog page's
//   "Usage" snippet does, inside a root composition with an empty timeline (the preview wrapper);
// - a component's demo.html (itself a host that mounts ./<name>.html) becomes index.html, with
//   the item's files copied as they sit in the registry.
// - an example (registry/examples) is a whole project: its files are copied as they sit.
// The compositions themselves are not edited. Usage:
//   npx tsx bench/compat/build-corpus.ts [--mirror DIR] [--commit SHA]
// writes the committed corpus (SELECTION); with `--all --out DIR` it writes every other item of
// the catalog (blocks, components and examples) as DIR/projects/<name> and DIR/corpus.json instead,
// for a sweep (`npm run bench -- --compat --corpus DIR`). Put DIR somewhere git ignores
// (bench/results/...): it holds some 330 projects.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

const HERE = import.meta.dirname;
const MIRROR_DEFAULT = "/work/.mirror/heygen-com+hyperframes/repo";
const COMMIT_DEFAULT = "59a69a145";
const REPOSITORY = "https://github.com/heygen-com/hyperframes";

/** What each item is in the corpus for (the features the catalog uses that it exercises). */
type Kind = "block" | "component" | "example";

/**
 * `exception`: set when the item misses the bar for a measured reason that is the reference's
 * (bench/README.md "Compatibility" has the measurement); bench/compat.ts prints it.
 */
export const SELECTION: { name: string; kind: Kind; covers: string; exception?: string }[] = [
  { name: "x-post", kind: "block", covers: "SVG icons, Google Fonts (Inter), GSAP" },
  { name: "apple-money-count", kind: "block", covers: "filters, audio, flying bills" },
  { name: "transitions-3d", kind: "block", covers: "3D scene transitions, filters" },
  { name: "code-morph", kind: "block", covers: "code card morphing, filters" },
  { name: "mk-clone-wall-transition", kind: "block", covers: "clone wall, blend modes" },
  { name: "mk-placeholder-grid", kind: "block", covers: "promo grid" },
  {
    name: "heygen-avatar-promo-card",
    kind: "block",
    covers: "video, audio, images, @font-face, 9:16",
  },
  { name: "code-snippet-dark-modern", kind: "block", covers: "<template> file, SVG, 3D, image" },
  { name: "thread-message-stack", kind: "block", covers: "<template> file" },
  { name: "camcorder-hud", kind: "block", covers: "nested composition, images" },
  {
    name: "editorial-flash-overlay",
    kind: "block",
    covers: "nested composition, blend modes, images",
  },
  {
    name: "organic-light-leak-overlay",
    kind: "block",
    covers: "nested composition, filters, blend",
  },
  { name: "data-chart", kind: "block", covers: "SVG chart, Google Fonts" },
  { name: "mk-line-graph", kind: "block", covers: "SVG line graph" },
  { name: "bar-chart-race", kind: "block", covers: "DOM bar chart" },
  {
    name: "split-flap-board",
    kind: "block",
    covers: "3D transforms",
    exception:
      "the reference leaves this block's fonts unpromoted: PostCSS cannot parse the variable CSS it writes for the alphabet's apostrophe",
  },
  { name: "camera-dolly-zoom", kind: "block", covers: "3D camera" },
  { name: "lt-mask-reveal", kind: "block", covers: "lower third, masks" },
  { name: "lt-neon-border", kind: "block", covers: "lower third, SVG" },
  { name: "lower-third-bild", kind: "block", covers: "@font-face" },
  { name: "news-ticker", kind: "block", covers: "ticker, filters" },
  { name: "oscilloscope-trace", kind: "block", covers: "2D canvas" },
  {
    name: "chromatic-radial-split",
    kind: "block",
    covers: "WebGL shader transition, Google Fonts",
  },
  { name: "light-leak", kind: "block", covers: "WebGL shader, Google Fonts" },
  { name: "hw-title", kind: "block", covers: "hand-drawn SVG, @font-face" },
  { name: "notes-reveal", kind: "block", covers: "SVG, @font-face" },
  { name: "spotify-card", kind: "block", covers: "SVG, filters, Google Fonts" },
  { name: "macos-notification", kind: "block", covers: "SVG, backdrop filter, Google Fonts" },
  { name: "us-map-hex", kind: "block", covers: "SVG map, filters, Google Fonts" },
  { name: "beat-freeze-cut", kind: "block", covers: "SVG, filters, blend, Google Fonts" },
  { name: "transitions-radial", kind: "block", covers: "3D, filters" },
  { name: "ui-3d-reveal", kind: "block", covers: "3D, SVG, filters, images, Google Fonts" },
  { name: "yt-prism-title", kind: "block", covers: "3D text, filters" },
  { name: "north-korea-locked-down", kind: "block", covers: "SVG, filters, blend, images" },
  { name: "nyc-paris-flight", kind: "block", covers: "SVG map, audio, images, blend" },
  { name: "vpn-youtube-spot", kind: "block", covers: "SVG, audio" },
  { name: "weight-wave", kind: "block", covers: "canvas, variable @font-face" },
  { name: "gesture-tap", kind: "component", covers: "demo host + <template> component" },
  { name: "confetti", kind: "component", covers: "seeded particles, filters, blend" },
  { name: "grain-overlay", kind: "component", covers: "CSS @keyframes animation, random grain" },
  { name: "count-up", kind: "component", covers: "<template> component, number text" },
  { name: "particle-image-reveal", kind: "component", covers: "<template>, canvas, video, image" },
  { name: "screen-flow-carousel", kind: "component", covers: "<template>, video, images" },
  {
    name: "variable-font-flex",
    kind: "component",
    covers: "variable font from jsdelivr (@fontsource-variable)",
  },
  {
    name: "variable-axis-type",
    kind: "component",
    covers: "<template>, Google Fonts variable axes",
  },
  { name: "perspective-marquee", kind: "component", covers: "3D marquee" },
  { name: "svg-mask-reveal", kind: "component", covers: "<template>, SVG mask" },
  { name: "rgb-glitch-text", kind: "component", covers: "text effect, blend modes" },
  { name: "caption-kinetic-slam", kind: "component", covers: "captions, canvas, Google Fonts" },
  { name: "split-tilt-cards", kind: "component", covers: "<template>, 3D, filters" },
  { name: "ink-bleed-reveal", kind: "component", covers: "<template>, canvas, SVG filter, blend" },
  {
    name: "focus-rack",
    kind: "component",
    covers: "<html data-composition-id> without a size above the sized root",
    exception:
      "the reference renders it at 1080x1920, a portrait crop of its 1920x1080 root; svc draws the root's size",
  },
  {
    name: "matrix-decode",
    kind: "component",
    covers: "font shorthand with a generic first family, then a var() font-size",
  },
  {
    name: "typewriter",
    kind: "component",
    covers: "font shorthand naming ui-monospace (not promoted to Inter, as in the reference)",
  },
];

interface RegistryItem {
  name: string;
  type: string;
  duration?: number;
  dimensions?: { width: number; height: number };
  tags?: string[];
  /** `target` is missing on a few items; the install then puts the file under compositions/. */
  files?: { path: string; target?: string; type: string }[];
}

function git(mirror: string, args: string[]): Buffer {
  return execFileSync("git", ["-C", mirror, ...args], { maxBuffer: 256 * 1024 * 1024 });
}

function show(mirror: string, commit: string, path: string): Buffer {
  return git(mirror, ["show", `${commit}:${path}`]);
}

function listFiles(mirror: string, commit: string, dir: string): string[] {
  return git(mirror, ["ls-tree", "-r", "--name-only", commit, dir])
    .toString()
    .split("\n")
    .filter(Boolean)
    .map((path) => path.slice(dir.length + 1));
}

function write(path: string, body: Buffer | string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, body);
}

/** The host index.html the reference's catalog preview wraps a block in, mounting its install target. */
export function blockHost(item: RegistryItem, target: string): string {
  const width = item.dimensions?.width ?? 1920;
  const height = item.dimensions?.height ?? 1080;
  const duration = item.duration ?? 5;
  const tags = item.tags ?? [];
  const background = tags.includes("social") || tags.includes("overlay") ? "#1a1a2e" : "#ffffff";
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="UTF-8" />
  <meta name="viewport" content="width=${width}, height=${height}" />
  <script src="https://cdn.jsdelivr.net/npm/gsap@3.14.2/dist/gsap.min.js"></script>
  <style>* { margin: 0; padding: 0; } html, body { width: ${width}px; height: ${height}px; overflow: hidden; background: ${background}; }</style>
</head>
<body>
  <div data-composition-id="preview-root" data-width="${width}" data-height="${height}" data-start="0" data-duration="${duration}">
    <div data-composition-id="${item.name}" data-composition-src="${target}" data-start="0" data-duration="${duration}" data-track-index="1" data-width="${width}" data-height="${height}"></div>
  </div>
  <script>
    window.__timelines = window.__timelines || {};
    window.__timelines["preview-root"] = gsap.timeline({ paused: true });
  </script>
</body>
</html>
`;
}

/** The registry's item names of a kind at a commit (folders under registry/<kind>s/). */
function registryNames(mirror: string, commit: string, kind: Kind): string[] {
  return git(mirror, ["ls-tree", "--name-only", commit, `registry/${kind}s/`])
    .toString()
    .split("\n")
    .filter(Boolean)
    .map((path) => path.slice(`registry/${kind}s/`.length))
    .filter((name) => !name.includes("."));
}

function readItem(mirror: string, commit: string, source: string): RegistryItem | undefined {
  const listed = git(mirror, ["ls-tree", "--name-only", commit, `${source}/registry-item.json`]);
  if (!listed.length) return undefined; // a few examples have none: they are plain projects
  return JSON.parse(
    show(mirror, commit, `${source}/registry-item.json`).toString(),
  ) as RegistryItem;
}

/** Writes one item as a project in `out`; returns its registry metadata. */
function writeProject(
  mirror: string,
  commit: string,
  name: string,
  kind: Kind,
  out: string,
): RegistryItem | undefined {
  const source = `registry/${kind}s/${name}`;
  const item = readItem(mirror, commit, source);
  rmSync(out, { recursive: true, force: true });
  if (kind === "block") {
    if (!item) throw new Error(`${name}: no registry-item.json`);
    const targetOf = (file: { path: string; target?: string }) =>
      file.target ?? `compositions/${file.path}`;
    for (const file of item.files ?? [])
      write(join(out, targetOf(file)), show(mirror, commit, `${source}/${file.path}`));
    const entry = item.files?.find((file) => file.path.endsWith(".html"));
    if (!entry) throw new Error(`${name}: no composition file`);
    write(join(out, "index.html"), blockHost(item, targetOf(entry)));
  } else {
    const files = listFiles(mirror, commit, source);
    // A component's demo.html is its host; an example is already a project with an index.html.
    const host = kind === "component" || !files.includes("index.html") ? "demo.html" : "index.html";
    for (const file of files) {
      if (file === "registry-item.json" || file.endsWith(".md")) continue;
      if (kind === "example" && file === "demo.html" && host !== "demo.html") continue;
      write(
        join(out, file === host ? "index.html" : file),
        show(mirror, commit, `${source}/${file}`),
      );
    }
  }
  return item;
}

function entryFor(
  name: string,
  kind: Kind,
  covers: string,
  commit: string,
  item: RegistryItem | undefined,
) {
  return {
    name,
    project: `projects/${name}`,
    kind,
    covers,
    source: `${REPOSITORY}/tree/${commit}/registry/${kind}s/${name}`,
    commit,
    licence: "Apache-2.0 (Copyright HeyGen Inc.; see the repository's LICENSE)",
    width: item?.dimensions?.width,
    height: item?.dimensions?.height,
  };
}

/** Every catalog item the committed corpus does not hold, for a sweep, into `outDir`. */
function writeSweepCorpus(mirror: string, commit: string, outDir: string): void {
  const selected = new Set(SELECTION.map((item) => item.name));
  const taken = new Set<string>();
  const entries = [];
  for (const kind of ["block", "component", "example"] as const) {
    for (const name of registryNames(mirror, commit, kind)) {
      if (selected.has(name)) continue;
      // registry/examples/motion-blur shares its name with a component.
      const id = taken.has(name) ? `${name}-${kind}` : name;
      taken.add(id);
      const item = writeProject(mirror, commit, name, kind, join(outDir, "projects", id));
      entries.push({
        ...entryFor(name, kind, (item?.tags ?? []).join(", "), commit, item),
        name: id,
        project: `projects/${id}`,
      });
    }
  }
  write(
    join(outDir, "corpus.json"),
    JSON.stringify({ repository: REPOSITORY, commit, items: entries }, null, 2) + "\n",
  );
  console.log(`${entries.length} more compositions from ${REPOSITORY} at ${commit} in ${outDir}`);
}

function main(): void {
  const argv = process.argv.slice(2);
  const option = (flag: string, fallback: string) => {
    const at = argv.indexOf(flag);
    return at >= 0 && argv[at + 1] ? argv[at + 1]! : fallback;
  };
  const mirror = option("--mirror", MIRROR_DEFAULT);
  const commit = git(mirror, ["rev-parse", option("--commit", COMMIT_DEFAULT)])
    .toString()
    .trim();
  const licence = show(mirror, commit, "LICENSE").toString();
  if (!/Apache License\s+Version 2\.0/.test(licence)) throw new Error("the licence changed");
  if (argv.includes("--all")) {
    const out = option("--out", "");
    if (!out)
      throw new Error("--all needs --out DIR (a folder git ignores, e.g. bench/results/sweep)");
    writeSweepCorpus(mirror, commit, resolve(out));
    return;
  }
  const projects = join(HERE, "projects");
  const entries = [];
  for (const { name, kind, covers, exception } of SELECTION) {
    const item = writeProject(mirror, commit, name, kind, join(projects, name));
    entries.push({
      ...entryFor(name, kind, covers, commit, item),
      ...(exception && { exception }),
    });
  }
  entries.push({
    name: "hyperframes-init",
    project: "../../e2e/data/hyperframes-init/my-video",
    kind: "init",
    covers: "the blank project `hyperframes init --example blank` writes",
    source:
      "npm hyperframes@0.8.170, `hyperframes init my-video --example blank --non-interactive`",
    commit,
    licence: "Apache-2.0 (generated by the reference CLI from its own template)",
  });
  write(
    join(HERE, "corpus.json"),
    JSON.stringify({ repository: REPOSITORY, commit, items: entries }, null, 2) + "\n",
  );
  console.log(`${entries.length} compositions from ${REPOSITORY} at ${commit}`);
}

if (process.argv[1] && import.meta.filename === process.argv[1]) main();
