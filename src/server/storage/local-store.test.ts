// Local object store and its signed URLs, on a real temp dir with an injected clock.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseRange } from "./local-routes";
import { LocalObjectStore } from "./local-store";
import { ObjectTooLargeError } from "./object-store";

let dir: string;
let now: number;
let store: LocalObjectStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-store-"));
  now = 1_700_000_000_000;
  store = new LocalObjectStore({
    root: dir,
    signingSecret: "secret",
    baseUrl: () => "http://127.0.0.1:1",
    now: () => now,
  });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function query(url: string) {
  return Object.fromEntries(new URL(url).searchParams) as {
    exp?: string;
    size?: string;
    sig?: string;
  };
}

describe("LocalObjectStore", () => {
  it("accepts its own signature until the expiry, then reports it expired", async () => {
    const url = await store.signGet("renders/u/r/1/video.mp4", { expiresInSeconds: 60 });
    expect(store.verify("get", "renders/u/r/1/video.mp4", query(url)).check).toBe("ok");
    now += 61_000;
    expect(store.verify("get", "renders/u/r/1/video.mp4", query(url)).check).toBe("expired");
  });

  it("refuses a signature used for another key, another operation, or another size", async () => {
    const { url, headers } = await store.signPut("uploads/a.zip", {
      sizeBytes: 10,
      sha256: "a".repeat(64),
      expiresInSeconds: 60,
    });
    expect(headers).toEqual({});
    expect(store.verify("put", "uploads/a.zip", query(url))).toEqual({ check: "ok", maxBytes: 10 });
    expect(store.verify("put", "uploads/b.zip", query(url)).check).toBe("invalid");
    expect(store.verify("get", "uploads/a.zip", query(url)).check).toBe("invalid");
    expect(store.verify("put", "uploads/a.zip", { ...query(url), size: "11" }).check).toBe(
      "invalid",
    );
  });

  it("refuses keys that would leave the store", async () => {
    await expect(store.signGet("../outside", { expiresInSeconds: 1 })).rejects.toThrow();
    await expect(store.signGet("a/../../outside", { expiresInSeconds: 1 })).rejects.toThrow();
    await expect(store.signGet("/etc/passwd", { expiresInSeconds: 1 })).rejects.toThrow();
  });

  it("stops a streamed upload at the size limit and keeps no partial file", async () => {
    await expect(
      store.put("uploads/x.zip", Readable.from([Buffer.alloc(6), Buffer.alloc(6)]), {
        maxBytes: 10,
      }),
    ).rejects.toBeInstanceOf(ObjectTooLargeError);
    expect(await store.stat("uploads/x.zip")).toBeUndefined();
    await store.put("uploads/x.zip", Readable.from([Buffer.from("hello")]), { maxBytes: 10 });
    expect(await readFile(join(dir, "uploads/x.zip"), "utf8")).toBe("hello");
  });
});

describe("parseRange", () => {
  it("reads single byte ranges and refuses ranges past the end", () => {
    expect(parseRange(undefined, 100)).toBeNull();
    expect(parseRange("bytes=0-9", 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange("bytes=90-", 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange("bytes=-10", 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange("bytes=50-1000", 100)).toEqual({ start: 50, end: 99 });
    expect(parseRange("bytes=100-", 100)).toBe("unsatisfiable");
  });
});
