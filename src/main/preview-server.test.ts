// The preview server answers the player's CORS fetch for loopback pages only, answers the CDN URLs
// svc has copies of under /__svc/libs/cdn/ (the frame's library base), and hands out served frame
// documents (`?svc-frame=1`) with the frame script before any page script and CDN URLs pointed at
// those copies, sandboxed, inside the folder.
import { request } from "node:http";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { frameScript } from "./frame-script";
import { PREVIEW_LIBRARY_PATH, PreviewServers } from "./preview-server";

const COMPOSITION = `<!doctype html><html><head><meta charset="utf-8">
<script src="https://cdn.jsdelivr.net/npm/gsap@3.12.5/dist/gsap.min.js"></script>
<link rel="stylesheet" href="https://fonts.googleapis.com/css2?family=Anton&display=block">
<script src="https://cdn.example.com/other.js"></script>
<script>window.pageScript = 1;</script></head><body><p>hello</p></body></html>`;

let scratch: string;
let dir: string;
let servers: PreviewServers;
let url: string;
let origin: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-preview-"));
  dir = join(scratch, "project");
  await mkdir(join(dir, "scenes"), { recursive: true });
  await writeFile(join(dir, "index.html"), COMPOSITION);
  await writeFile(
    join(dir, "style.css"),
    `@import url("https://fonts.googleapis.com/css2?family=Anton&display=block");\n` +
      `.a { background: url(https://cdn.example.com/bg.png); }`,
  );
  await writeFile(
    join(dir, "load.js"),
    `const s = "https://cdn.jsdelivr.net/npm/gsap@3.12.5/dist/gsap.min.js";`,
  );
  await writeFile(join(dir, "plain.css"), `.b { color: red; }`);
  await writeFile(join(scratch, "outside.html"), "<!doctype html><p>secret</p>");
  await symlink(join(scratch, "outside.html"), join(dir, "scenes", "linked.html"));
  servers = new PreviewServers();
  url = await servers.urlFor(dir, "index.html");
  origin = new URL(url).origin;
});

afterAll(async () => {
  await servers.close();
  await rm(scratch, { recursive: true, force: true });
});

/** GET `path` on the preview server with the given Host header (fetch cannot set Host). */
function getWithHost(path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const target = new URL(path, origin);
    request(target, { headers: { host } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    })
      .on("error", reject)
      .end();
  });
}

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

  it("answers CDN URLs from the app's own copies, with CORS for the sandboxed frame", async () => {
    const cdn = `${origin}${PREVIEW_LIBRARY_PATH}/cdn`;
    const gsap = await fetch(`${cdn}/cdn.jsdelivr.net/npm/gsap@3.12.5/dist/gsap.min.js`);
    expect(gsap.status).toBe(200);
    expect(gsap.headers.get("content-type")).toMatch(/javascript/);
    expect(await gsap.text()).toContain("GSAP");
    const css = await fetch(`${cdn}/fonts.googleapis.com/css2?family=Anton&display=block`, {
      headers: { origin: "null" },
    });
    expect(css.headers.get("access-control-allow-origin")).toBe("null");
    const font = /url\(([^)]+\.woff2)\)/.exec(await css.text())![1]!;
    expect(
      font.startsWith(`${PREVIEW_LIBRARY_PATH}/cdn/cdn.jsdelivr.net/npm/@fontsource/anton@`),
    ).toBe(true);
    const fontFile = await fetch(`${origin}${font}`, { headers: { origin: "null" } });
    expect(fontFile.status).toBe(200);
    expect(fontFile.headers.get("content-type")).toMatch(/^font\/woff2/);
    expect(fontFile.headers.get("access-control-allow-origin")).toBe("null");
  });

  it("points CDN URLs in the project's stylesheets and script files at its own copies", async () => {
    const css = await fetch(`${origin}/style.css`, { headers: { origin: "null" } });
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    expect(css.headers.get("access-control-allow-origin")).toBe("null");
    const cssText = await css.text();
    expect(cssText).toContain(
      `@import url("${PREVIEW_LIBRARY_PATH}/cdn/fonts.googleapis.com/css2?family=Anton&display=block")`,
    );
    expect(cssText).toContain("url(https://cdn.example.com/bg.png)");
    const script = await (await fetch(`${origin}/load.js`)).text();
    expect(script).toBe(
      `const s = "${PREVIEW_LIBRARY_PATH}/cdn/cdn.jsdelivr.net/npm/gsap@3.12.5/dist/gsap.min.js";`,
    );
    const plain = await fetch(`${origin}/plain.css`, { headers: { range: "bytes=0-3" } });
    expect(plain.status).toBe(206);
    expect(await plain.text()).toBe(".b {");
  });

  it("sends a CDN file it has no copy of to the CDN, and serves nothing else there", async () => {
    const cdn = `${origin}${PREVIEW_LIBRARY_PATH}/cdn`;
    const missing = await fetch(`${cdn}/unpkg.com/no-such-package@1/x.js`, { redirect: "manual" });
    expect(missing.status).toBe(302);
    expect(missing.headers.get("location")).toBe("https://unpkg.com/no-such-package@1/x.js");
    for (const path of [
      "/example.com/x.js",
      "/cdn.jsdelivr.net/npm/gsap@3/..%2F..%2F..%2Fpackage.json",
      "/cdn.jsdelivr.net/npm/gsap@3/dist/..%2F..%2Fpackage.json",
    ]) {
      const response = await fetch(`${cdn}${path}`, { redirect: "manual" });
      expect(response.status, path).toBe(404);
    }
  });

  it("serves the frame document with the frame script before the first page script", async () => {
    const response = await fetch(`${url}?svc-frame=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("content-security-policy")).toBe("sandbox allow-scripts");
    const html = await response.text();
    const script = await frameScript();
    const injectedAt = html.indexOf("window.__svcConfig=");
    expect(injectedAt).toBeGreaterThan(html.indexOf("<head>"));
    expect(injectedAt).toBeLessThan(html.indexOf("<script src="));
    expect(html.indexOf(script.slice(0, 200))).toBeGreaterThan(injectedAt);
    expect(html.indexOf("window.pageScript")).toBeGreaterThan(html.indexOf(script.slice(-200)));
    // CDN URLs svc answers point at the server's copies; other URLs and content are untouched.
    const cdn = `${PREVIEW_LIBRARY_PATH}/cdn`;
    expect(html).toContain(
      `<script src="${cdn}/cdn.jsdelivr.net/npm/gsap@3.12.5/dist/gsap.min.js"></script>`,
    );
    expect(html).toContain(`href="${cdn}/fonts.googleapis.com/css2?family=Anton&display=block"`);
    expect(html).not.toContain("https://cdn.jsdelivr.net");
    expect(html).not.toContain("https://fonts.googleapis.com");
    expect(html).toContain(`<script src="https://cdn.example.com/other.js"></script>`);
    expect(html).toContain("<p>hello</p>");
    // The runtime learns the same base, for the sub-compositions it loads.
    expect(html).toContain(`libraryBase:new URL("${PREVIEW_LIBRARY_PATH}",location.href).href`);
    // Without the marker the file is served as it is.
    expect(await (await fetch(url)).text()).toBe(COMPOSITION);
  });

  it("gives the same frame document every time (variables travel in the URL fragment)", async () => {
    const first = await (await fetch(`${url}?svc-frame=1`)).text();
    expect(await (await fetch(`${url}?svc-frame=1&x=2`)).text()).toBe(first);
  });

  it("keeps frame documents inside the project folder, symlinks included", async () => {
    for (const path of [
      "/..%2Foutside.html?svc-frame=1",
      "/scenes/..%2F..%2Foutside.html?svc-frame=1",
      "/scenes/linked.html?svc-frame=1",
      "/missing.html?svc-frame=1",
    ]) {
      const response = await fetch(`${origin}${path}`);
      expect(response.status, path).toBe(404);
      expect(await response.text(), path).not.toContain("secret");
    }
  });

  it("refuses a frame document to a request naming another host", async () => {
    const port = new URL(origin).port;
    expect(await getWithHost("/index.html?svc-frame=1", `127.0.0.1:${port}`)).toBe(200);
    expect(await getWithHost("/index.html?svc-frame=1", `evil.example:${port}`)).toBe(403);
    expect(await getWithHost("/index.html", "evil.example")).toBe(403);
  });
});
