// `svc render` starts many times in a day of work (and once per chunk on a render farm), so what
// its start loads is held here: the commands that render on this computer reach none of the
// service client's packages through static imports (bin/svc.js bundles the CLI with esbuild, which
// keeps a dynamic import() out of the start). These packages cost ~0.4 s of CPU at each start
// when the doors refactor let them in through src/core/index.ts.
import { build } from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const HEAVY = [
  "got",
  "undici",
  "archiver",
  "semver",
  "@aws-sdk/client-s3",
  "pg",
  "pg-boss",
  "fastify",
];

/** Each module reached from `entry` by static imports, with the module that imported it. */
async function staticImports(entry: string): Promise<Map<string, string | undefined>> {
  const result = await build({
    entryPoints: [join(ROOT, entry)],
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    platform: "node",
    format: "esm",
    packages: "external",
    metafile: true,
    splitting: true,
    outdir: join(ROOT, "out", "startup-imports"),
    logLevel: "silent",
  });
  const inputs = result.metafile.inputs;
  const reached = new Map<string, string | undefined>([[entry, undefined]]);
  const queue = [entry];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const imported of inputs[file]?.imports ?? []) {
      if (imported.kind !== "import-statement" || reached.has(imported.path)) continue;
      reached.set(imported.path, file);
      queue.push(imported.path);
    }
  }
  return reached;
}

function chain(reached: Map<string, string | undefined>, module: string): string {
  const path: string[] = [];
  for (let at: string | undefined = module; at !== undefined; at = reached.get(at)) path.push(at);
  return path.reverse().join(" -> ");
}

describe("the CLI's start", () => {
  it("loads none of the service client's packages for the commands that render here", async () => {
    const reached = await staticImports("src/cli/program.ts");
    expect(reached.has("src/cli/render.ts")).toBe(true);
    const heavy = HEAVY.filter((name) => reached.has(name)).map((name) => chain(reached, name));
    expect(heavy).toEqual([]);
  });
});
