// The page runtime's disk cache: a new process reads the built runtime when none of its sources
// changed, and builds it again when one did.
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

let cacheHome: string;
const saved = process.env.XDG_CACHE_HOME;

beforeEach(async () => {
  cacheHome = await mkdtemp(join(tmpdir(), "svc-runtime-cache-"));
  process.env.XDG_CACHE_HOME = cacheHome;
});

afterEach(async () => {
  if (saved === undefined) delete process.env.XDG_CACHE_HOME;
  else process.env.XDG_CACHE_HOME = saved;
  await rm(cacheHome, { recursive: true, force: true });
});

/** A fresh copy of the module, as a new process would load it. */
async function freshRuntimeBundle(): Promise<string> {
  vi.resetModules();
  const { runtimeBundle } = await import("./runtime-bundle");
  return runtimeBundle();
}

async function cacheFile(): Promise<string> {
  const dir = join(cacheHome, "svc", "page-runtime");
  const [name] = await readdir(dir);
  return join(dir, name!);
}

describe("runtimeBundle's disk cache", () => {
  it("is read by the next process while the sources are unchanged, and rebuilt once one changes", async () => {
    const built = await freshRuntimeBundle();
    const file = await cacheFile();
    const cached = JSON.parse(await readFile(file, "utf8")) as {
      inputs: [string, number, number][];
      text: string;
    };
    expect(cached.text === built).toBe(true);
    expect(cached.inputs.some(([path]) => path.endsWith("runtime/index.ts"))).toBe(true);

    // Same stamps, other text: the next process takes the text from the cache.
    await writeFile(file, JSON.stringify({ ...cached, text: "/* from the cache */" }));
    expect(await freshRuntimeBundle()).toBe("/* from the cache */");

    // One source's time differs from its stamp: the runtime is built again, and saved.
    const [first, ...rest] = cached.inputs;
    const stale = [[first![0], first![1], first![2] - 1000], ...rest];
    await writeFile(file, JSON.stringify({ inputs: stale, text: "/* stale */" }));
    expect((await freshRuntimeBundle()) === built).toBe(true);
    expect(JSON.parse(await readFile(file, "utf8")).text === built).toBe(true);
  });
});
