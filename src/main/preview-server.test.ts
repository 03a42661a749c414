// The preview server answers the player's CORS fetch for loopback pages only, and serves the
// app's own GSAP copy where the player's `library-base` points.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PREVIEW_LIBRARY_PATH, PreviewServers } from "./preview-server";

let dir: string;
let servers: PreviewServers;
let url: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-preview-"));
  await writeFile(join(dir, "index.html"), "<!doctype html><p>hello</p>");
  servers = new PreviewServers();
  url = await servers.urlFor(dir, "index.html");
});

afterAll(async () => {
  await servers.close();
  await rm(dir, { recursive: true, force: true });
});

describe("preview server", () => {
  it("lets a loopback page and a null-origin frame read the composition", async () => {
    for (const origin of ["http://127.0.0.1:5173", "http://localhost:8080", "null"]) {
      const response = await fetch(url, { headers: { origin } });
      expect(response.status).toBe(200);
      expect(response.headers.get("access-control-allow-origin")).toBe(origin);
    }
  });

  it("gives other web sites no CORS access", async () => {
    const response = await fetch(url, { headers: { origin: "http://evil.example" } });
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("serves GSAP from the app's own copy, and nothing outside it", async () => {
    const origin = new URL(url).origin;
    const gsap = await fetch(`${origin}${PREVIEW_LIBRARY_PATH}/gsap/gsap.min.js`);
    expect(gsap.status).toBe(200);
    expect(gsap.headers.get("content-type")).toMatch(/javascript/);
    expect(await gsap.text()).toContain("GSAP");
    const escape = await fetch(`${origin}${PREVIEW_LIBRARY_PATH}/gsap/..%2F..%2Fpackage.json`);
    expect(escape.status).toBe(404);
  });
});
