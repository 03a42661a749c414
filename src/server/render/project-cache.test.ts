// The worker's cache of unzipped projects: a second job of the same asset gets the same folder
// without unpacking again, the least recently used project goes when the cache is over its bound,
// and a project in use is never removed.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProjectCache } from "./project-cache";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-project-cache-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** An unpack that writes `bytes` bytes and counts its calls. */
function unpacker(bytes: number, calls: string[], name: string) {
  return async (dir: string) => {
    calls.push(name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "index.html"), "x".repeat(bytes));
  };
}

describe("ProjectCache", () => {
  it("unpacks an asset once, and evicts the least recently used one that is not in use", async () => {
    const cache = new ProjectCache(join(scratch, "cache"), 2500);
    const calls: string[] = [];
    const a1 = await cache.acquire("ast_a", unpacker(1000, calls, "a"));
    expect(a1.hit).toBe(false);
    await a1.release();
    const a2 = await cache.acquire("ast_a", unpacker(1000, calls, "a"));
    expect(a2.hit).toBe(true);
    expect(a2.dir).toBe(a1.dir);
    expect(await readFile(join(a2.dir, "index.html"), "utf8")).toHaveLength(1000);

    const b = await cache.acquire("ast_b", unpacker(1000, calls, "b"));
    await b.release();
    // a is still in use: adding c (3000 bytes in all) must evict b, the idle one, not a.
    const c = await cache.acquire("ast_c", unpacker(1000, calls, "c"));
    await c.release();
    await cache.acquire("ast_c", unpacker(1000, calls, "c")).then((entry) => entry.release());
    expect(existsSync(a2.dir)).toBe(true);
    expect(existsSync(b.dir)).toBe(false);
    expect(calls).toEqual(["a", "b", "c"]);
    await a2.release();
    await cache.clear();
    expect(existsSync(join(scratch, "cache"))).toBe(false);
  });

  it("unpacks once when two jobs of one asset arrive together, and never leaves half a project", async () => {
    const cache = new ProjectCache(join(scratch, "cache-2"), 10_000);
    const calls: string[] = [];
    const [x, y] = await Promise.all([
      cache.acquire("ast_x", unpacker(10, calls, "x")),
      cache.acquire("ast_x", unpacker(10, calls, "x")),
    ]);
    expect(calls).toEqual(["x"]);
    expect(x.dir).toBe(y.dir);
    await expect(
      cache.acquire("ast_bad", async (dir) => {
        await mkdir(dir, { recursive: true });
        throw new Error("corrupt zip");
      }),
    ).rejects.toThrow("corrupt zip");
    const bad = await cache.acquire("ast_bad", unpacker(10, calls, "bad"));
    expect(bad.hit).toBe(false);
    expect(calls).toEqual(["x", "bad"]);
  });
});
