import { mkdtemp, readFile, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { JsonFileWriter, readJsonFile, writeJsonFileAtomic } from "./atomic-file";
import { systemOpenCommand } from "./open";
import { sameSecret } from "./secrets";
import { abortableSleep, backoffDelay } from "./wait";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe("src/node", () => {
  it("compares secrets: equal only when identical and not empty", () => {
    expect(sameSecret("abc123", "abc123")).toBe(true);
    expect(sameSecret("abc123", "abc124")).toBe(false);
    expect(sameSecret("abc123", "abc1234")).toBe(false);
    expect(sameSecret("abc123", undefined)).toBe(false);
    expect(sameSecret("", "")).toBe(false);
  });

  it("writes JSON atomically as 0600 in a 0700 folder it creates, leaving no temp file", async () => {
    const root = await mkdtemp(join(tmpdir(), "svc-node-"));
    dirs.push(root);
    const file = join(root, "state", "queue.json");
    await writeJsonFileAtomic(file, { a: 1 });
    const writer = new JsonFileWriter(file);
    const value = { a: 2 };
    const first = writer.write(value);
    value.a = 3; // the queued write keeps the value it was given
    await Promise.all([first, writer.write({ a: 4 })]);
    expect(await readJsonFile(file)).toEqual({ a: 4 });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(root, "state"))).mode & 0o777).toBe(0o700);
    expect(await readdir(join(root, "state"))).toEqual(["queue.json"]);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ a: 4 });
    expect(await readJsonFile(join(root, "missing.json"))).toBeUndefined();
  });

  it("backs off by doubling up to the cap, with jitter only when asked", () => {
    const delays = [1, 2, 3, 4, 5].map((n) => backoffDelay(n, { baseMs: 100, capMs: 500 }));
    expect(delays).toEqual([100, 200, 400, 500, 500]);
    const jittered = backoffDelay(1, { baseMs: 100, capMs: 500, jitterMs: 50 });
    expect(jittered).toBeGreaterThanOrEqual(100);
    expect(jittered).toBeLessThan(150);
  });

  it("ends a sleep early with the caller's error when the signal fires", async () => {
    const sleep = abortableSleep(() => new Error("stopped by the user"));
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toThrow("stopped by the user");
    await expect(sleep(1, AbortSignal.abort())).rejects.toThrow("stopped by the user");
    await expect(sleep(1)).resolves.toBeUndefined();
  });

  it("names one system opener per platform", () => {
    expect(systemOpenCommand("darwin")).toBe("open");
    expect(systemOpenCommand("win32")).toBe("explorer");
    expect(systemOpenCommand("linux")).toBe("xdg-open");
  });
});
