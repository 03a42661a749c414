import { describe, expect, it } from "vitest";
import {
  cdnUrlForLibraryPath,
  cdnAllowlist,
  cdnAllowlistAllows,
  googleFontsRequest,
  libraryUrlForCdnUrl,
  npmFileForCdnUrl,
  rewriteCdnUrls,
  versionSatisfies,
} from "./cdn";

describe("npmFileForCdnUrl", () => {
  it("reads package, version and path from jsdelivr and unpkg URLs, scoped or not", () => {
    expect(
      npmFileForCdnUrl(
        "https://cdn.jsdelivr.net/npm/@fontsource-variable/roboto-flex@5.2.8/files/a.woff2",
      ),
    ).toEqual({
      packageName: "@fontsource-variable/roboto-flex",
      version: "5.2.8",
      path: "files/a.woff2",
      entry: "script",
    });
    expect(npmFileForCdnUrl("https://unpkg.com/d3/dist/d3.min.js?x=1")).toEqual({
      packageName: "d3",
      version: undefined,
      path: "dist/d3.min.js",
      entry: "script",
    });
  });

  it("reads a bare package URL as the CDN's default file, and esm.sh and Skypack as modules", () => {
    expect(npmFileForCdnUrl("https://cdn.jsdelivr.net/npm/animejs@3")).toEqual({
      packageName: "animejs",
      version: "3",
      path: "",
      entry: "script",
    });
    expect(npmFileForCdnUrl("https://esm.sh/three@0.160.0?bundle")).toEqual({
      packageName: "three",
      version: "0.160.0",
      path: "",
      entry: "module",
    });
    expect(npmFileForCdnUrl("https://cdn.skypack.dev/d3-ease@3/src/index.js")).toEqual({
      packageName: "d3-ease",
      version: "3",
      path: "src/index.js",
      entry: "module",
    });
    expect(
      npmFileForCdnUrl("https://cdnjs.cloudflare.com/ajax/libs/lottie-web/5.12.2/lottie.min.js"),
    ).toEqual({
      packageName: "lottie-web",
      version: "5.12.2",
      path: "build/player/lottie.min.js",
      entry: "script",
    });
    // esm.sh's own builds are not files of a package.
    expect(npmFileForCdnUrl("https://esm.sh/v135/three@0.160.0/es2022/three.mjs")).toBeUndefined();
  });

  it("maps cdnjs three.js releases to npm versions and ignores what the CDN generates", () => {
    expect(
      npmFileForCdnUrl("https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js"),
    ).toEqual({
      packageName: "three",
      version: "0.128.0",
      path: "build/three.min.js",
      entry: "script",
    });
    expect(npmFileForCdnUrl("https://cdn.jsdelivr.net/npm/d3@7/+esm")).toBeUndefined();
    expect(npmFileForCdnUrl("https://cdn.jsdelivr.net/npm/x@1/../../etc/passwd")).toBeUndefined();
    expect(npmFileForCdnUrl("https://example.com/npm/d3@7/dist/d3.js")).toBeUndefined();
  });
});

describe("versionSatisfies", () => {
  it("accepts the same major, and the same minor below 1.0", () => {
    expect(versionSatisfies("7.9.0", "7")).toBe(true);
    expect(versionSatisfies("5.3.0", "5.2.8")).toBe(true);
    expect(versionSatisfies("8.0.0", "7")).toBe(false);
    expect(versionSatisfies("0.160.0", "0.147.0")).toBe(false);
    expect(versionSatisfies("0.147.1", "0.147.0")).toBe(true);
    expect(versionSatisfies("1.0.0", undefined)).toBe(true);
  });
});

describe("googleFontsRequest", () => {
  it("reads css2 families, weights, italics, ranges and display", () => {
    const request = googleFontsRequest(
      "https://fonts.googleapis.com/css2?family=Inter:ital,wght@0,400;1,700&amp;family=Bebas+Neue&family=Roboto+Flex:opsz,wdth,wght@8..144,25..151,100..1000&display=block",
    );
    expect(request?.display).toBe("block");
    expect(request?.families).toEqual([
      { family: "Inter", weights: [400, 700], italic: true, normal: true, otherAxes: [] },
      { family: "Bebas Neue", weights: [400], italic: false, normal: true, otherAxes: [] },
      {
        family: "Roboto Flex",
        weights: [],
        weightRange: [100, 1000],
        italic: false,
        normal: true,
        otherAxes: ["opsz", "wdth"],
      },
    ]);
  });

  it("reads the older css API and ignores other hosts", () => {
    expect(
      googleFontsRequest("https://fonts.googleapis.com/css?family=Lato:400,700italic|Anton"),
    ).toEqual({
      display: undefined,
      families: [
        { family: "Lato", weights: [400, 700], italic: true, normal: true, otherAxes: [] },
        { family: "Anton", weights: [400], italic: false, normal: true, otherAxes: [] },
      ],
    });
    expect(googleFontsRequest("https://fonts.gstatic.com/s/inter/v1/x.woff2")).toBeUndefined();
  });
});

describe("CDN URLs in a preview", () => {
  const PAGE = `<!doctype html><html><head>
<link rel="preconnect" href="https://fonts.googleapis.com" />
<link href="https://fonts.googleapis.com/css2?family=Inter:wght@400;700&amp;display=block" rel="stylesheet" />
<script src="https://cdn.jsdelivr.net/npm/gsap@3.14.2/dist/gsap.min.js"></script>
<script src="https://unpkg.com/d3@7/dist/d3.min.js"></script>
<script src="https://cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js"></script>
<script src="https://cdn.example.com/lib.js"></script>
<style>@import url('https://fonts.googleapis.com/css2?family=Anton');
@font-face { font-family: F; src: url(https://cdn.jsdelivr.net/npm/@fontsource-variable/roboto-flex@5.2.8/files/a.woff2) format("woff2"); }
.x { background: url("https://cdn.jsdelivr.net/npm/d3@7/"); }</style>
</head><body><script>import("//unpkg.com/d3@7/dist/d3.min.js");</script></body></html>`;

  it("points every URL svc answers at the library base, and leaves the others", () => {
    const out = rewriteCdnUrls(PAGE, "/__svc/libs/");
    for (const rewritten of [
      `href="/__svc/libs/cdn/fonts.googleapis.com/css2?family=Inter:wght@400;700&amp;display=block"`,
      `src="/__svc/libs/cdn/cdn.jsdelivr.net/npm/gsap@3.14.2/dist/gsap.min.js"`,
      `src="/__svc/libs/cdn/unpkg.com/d3@7/dist/d3.min.js"`,
      `src="/__svc/libs/cdn/cdnjs.cloudflare.com/ajax/libs/three.js/r128/three.min.js"`,
      `@import url('/__svc/libs/cdn/fonts.googleapis.com/css2?family=Anton')`,
      `src: url(/__svc/libs/cdn/cdn.jsdelivr.net/npm/@fontsource-variable/roboto-flex@5.2.8/files/a.woff2) format`,
      `import("/__svc/libs/cdn/unpkg.com/d3@7/dist/d3.min.js")`,
    ]) {
      expect(out).toContain(rewritten);
    }
    // Not files of a package (a preconnect origin, a directory listing) and other hosts stay.
    expect(out).toContain(`href="https://fonts.googleapis.com"`);
    expect(out).toContain(`url("https://cdn.jsdelivr.net/npm/d3@7/")`);
    expect(out).toContain(`src="https://cdn.example.com/lib.js"`);
    expect(rewriteCdnUrls(out, "/__svc/libs")).toBe(out);
  });

  it("maps a library path back to the CDN URL it stands for, and nothing else", () => {
    for (const url of [
      "https://fonts.googleapis.com/css2?family=Inter:wght@400;700&display=block",
      "https://cdn.jsdelivr.net/npm/@fontsource/inter@5.2.8/files/inter-latin-400-normal.woff2",
      "https://cdnjs.cloudflare.com/ajax/libs/gsap/3.12.5/gsap.min.js",
    ]) {
      const local = libraryUrlForCdnUrl(url, "http://127.0.0.1:8080/libs")!;
      expect(local.startsWith("http://127.0.0.1:8080/libs/cdn/")).toBe(true);
      expect(cdnUrlForLibraryPath(local.slice("http://127.0.0.1:8080/libs/cdn/".length))).toBe(url);
    }
    expect(libraryUrlForCdnUrl("https://example.com/npm/d3@7/dist/d3.js", "/libs")).toBeUndefined();
    expect(cdnUrlForLibraryPath("example.com/npm/d3@7/dist/d3.js")).toBeUndefined();
    expect(cdnUrlForLibraryPath("169.254.169.254/latest/meta-data")).toBeUndefined();
    expect(cdnUrlForLibraryPath("cdn.jsdelivr.net/npm/x@1/../../etc/passwd")).toBeUndefined();
  });
});

describe("cdnAllowlist", () => {
  const list = cdnAllowlist([
    `<script src="https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.module.js"></script>
     <link href="https://fonts.googleapis.com/css2?family=Inter:wght@400;700&display=swap" rel="stylesheet">
     <script src="//cdnjs.cloudflare.com/ajax/libs/gsap/3.12.5/gsap.min.js"></script>`,
  ]);
  const allows = (url: string) => cdnAllowlistAllows(list, url);

  it("lets pages load the files they name, their package's page files and the fonts of their families", () => {
    expect(allows("https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.module.js")).toBe(true);
    expect(
      allows("https://cdn.jsdelivr.net/npm/three@0.160.0/examples/jsm/controls/OrbitControls.js"),
    ).toBe(true);
    expect(allows("https://fonts.googleapis.com/css2?family=Inter:wght@400;700&display=swap")).toBe(
      true,
    );
    expect(
      allows(
        "https://cdn.jsdelivr.net/npm/@fontsource/inter@5.0.0/files/inter-latin-400-normal.woff2",
      ),
    ).toBe(true);
    expect(allows("https://cdnjs.cloudflare.com/ajax/libs/gsap/3.12.5/ScrollTrigger.min.js")).toBe(
      true,
    );
  });

  it("refuses manifests, sources, maps, other versions and packages the pages do not name", () => {
    for (const url of [
      "https://cdn.jsdelivr.net/npm/three@0.160.0/package.json",
      "https://cdn.jsdelivr.net/npm/three@0.160.0/src/Three.ts",
      "https://cdn.jsdelivr.net/npm/three@0.160.0/build/three.module.js.map",
      "https://cdn.jsdelivr.net/npm/three@0.150.0/build/three.module.js",
      "https://cdn.jsdelivr.net/npm/fastify@5/fastify.js",
      "https://cdn.jsdelivr.net/npm/@fontsource/inter@5.0.0/package.json",
      "https://cdn.jsdelivr.net/npm/@fontsource/roboto@5.0.0/files/roboto-latin-400-normal.woff2",
      "https://fonts.googleapis.com/css2?family=Roboto",
    ]) {
      expect(allows(url), url).toBe(false);
    }
    expect(
      cdnAllowlistAllows(cdnAllowlist([]), "https://cdn.jsdelivr.net/npm/gsap@3/dist/gsap.min.js"),
    ).toBe(false);
  });
});
