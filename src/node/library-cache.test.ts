// The library cache against the real npm registry (CI reaches it): a tag is resolved once and
// pinned, files are kept by content hash, a second lookup works with the registry unreachable (a
// closed loopback port), a version that is not on npm is named, and esm.sh modules get their
// imports pointed where svc answers them.
import { createServer } from "node:net";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { npmFileForCdnUrl } from "../shared/cdn";
import { LibraryCache } from "./library-cache";
import { npmConfig, type NpmConfig } from "./npm-config";

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "svc-library-cache-"));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A loopback port nothing listens on: connections to it are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function request(url: string) {
  const parsed = npmFileForCdnUrl(url);
  if (!parsed) throw new Error(`not a CDN URL: ${url}`);
  return parsed;
}

describe("LibraryCache", () => {
  it("resolves a tag from the registry once, pins it, and answers later without the registry", async () => {
    const online = new LibraryCache({ root });
    const first = await online.file(
      request("https://cdn.jsdelivr.net/npm/animejs@3/lib/anime.min.js"),
    );
    if (!first.ok) throw new Error(first.problem.message);
    expect(first.file.version).toMatch(/^3\.\d+\.\d+$/);
    expect(first.file.requested).toBe("3");
    expect(first.file.integrity).toMatch(/^sha512-/);
    expect(first.file.body.toString("utf8")).toContain("anime");
    const index = JSON.parse(await readFile(join(root, "index.json"), "utf8")) as {
      specs: Record<string, { version: string }>;
    };
    expect(index.specs["animejs@3"]?.version).toBe(first.file.version);

    const offline: NpmConfig = {
      ...npmConfig(),
      registry: `http://127.0.0.1:${await closedPort()}/`,
      proxy: undefined,
    };
    const cached = new LibraryCache({ root, config: offline });
    const again = await cached.file(request("https://unpkg.com/animejs@3/lib/anime.min.js"));
    if (!again.ok) throw new Error(again.problem.message);
    expect(again.file.version).toBe(first.file.version);
    expect(again.file.body.equals(first.file.body)).toBe(true);

    // A package never fetched cannot be had offline, and the problem says so.
    const missing = await cached.file(request("https://unpkg.com/d3-ease@3.0.1/dist/d3-ease.js"));
    expect(missing.ok).toBe(false);
    if (!missing.ok) {
      expect(missing.problem.code).toBe("registry-unreachable");
      expect(missing.problem.message).toContain("127.0.0.1");
    }
  });

  it("pins every range resolved at once, so all of them answer offline", async () => {
    // A module's imports are requested together (typegpu's tinyest and typed-binary): each
    // range's pin must survive the others' writes of the index.
    const together = await mkdtemp(join(tmpdir(), "svc-library-cache-pins-"));
    try {
      const ranges = ["~0.1.2", "^0.1.0", "0.1", "0.1.x", ">=0.1.0 <0.2.0", "<0.2"];
      const urls = ranges.map((range) => `https://esm.sh/tinyest@${encodeURIComponent(range)}`);
      const online = new LibraryCache({ root: together });
      const first = await Promise.all(urls.map((url) => online.file(request(url))));
      const versions = first.map((answer) => (answer.ok ? answer.file.version : answer.problem));
      const offline = new LibraryCache({
        root: together,
        config: { ...npmConfig(), registry: `http://127.0.0.1:${await closedPort()}/` },
      });
      const again = await Promise.all(urls.map((url) => offline.file(request(url))));
      expect(again.map((answer) => (answer.ok ? answer.file.version : answer.problem))).toEqual(
        versions,
      );
    } finally {
      await rm(together, { recursive: true, force: true });
    }
  });

  it("names a version that is not on npm, and a file the package does not have", async () => {
    const cache = new LibraryCache({ root });
    const version = await cache.file(
      request("https://cdn.jsdelivr.net/npm/animejs@99.1.0/lib/anime.min.js"),
    );
    expect(version.ok).toBe(false);
    if (!version.ok) {
      expect(version.problem.code).toBe("not-on-npm");
      expect(version.problem.message).toBe("animejs 99.1.0 is not on npm");
    }
    const file = await cache.file(request("https://cdn.jsdelivr.net/npm/animejs@3.2.2/nope.js"));
    expect(file.ok).toBe(false);
    if (!file.ok) expect(file.problem.code).toBe("not-in-package");
  });

  it("answers a bare package URL with the CDN's default file, and esm.sh with a browser module", async () => {
    const cache = new LibraryCache({ root });
    const script = await cache.file(request("https://unpkg.com/d3-ease@3.0.1"));
    if (!script.ok) throw new Error(script.problem.message);
    expect(script.file.path).toBe("dist/d3-ease.min.js");

    // Its own files by absolute URL, its dependencies at the ranges it declares, both on esm.sh.
    const entry = await cache.file(request("https://esm.sh/d3-transition@3.0.1"));
    if (!entry.ok) throw new Error(entry.problem.message);
    const text = entry.file.body.toString("utf8");
    expect(text).toMatch(/["']https:\/\/esm\.sh\/d3-transition@3\.0\.1\/src\/[\w/]+\.js["']/);
    expect(text).not.toMatch(/(?:from|import) ?["']\.\.?\//);
    const inner = await cache.file(
      request("https://esm.sh/d3-transition@3.0.1/src/transition/index.js"),
    );
    if (!inner.ok) throw new Error(inner.problem.message);
    expect(inner.file.body.toString("utf8")).toMatch(
      /from ["']https:\/\/esm\.sh\/d3-selection@[^"']+["']/,
    );
  });
});
