// Well-known CDN URLs that svc answers from its own copy, so renders and previews work offline and
// always use the same bytes. Used by the engine's network policy and by <svc-player> when it
// builds a preview frame. Three kinds:
// - GSAP from jsdelivr, unpkg or cdnjs: always answered from the `gsap` package, whatever version
//   the URL names (the 3.x API is stable and compositions pin many different patch versions);
// - any other npm file from jsdelivr or unpkg (`/npm/<package>@<version>/<path>`, or the package
//   alone for its default file), esm.sh and Skypack (`/<package>@<version>[/<path>]`), and a few
//   cdnjs libraries that are npm packages under another name: answered with the same file of the
//   same version from the npm registry, cached by src/node/library-cache.ts (an installed package
//   of a compatible version when the registry cannot be reached and the cache has none);
// - Google Fonts stylesheets (`fonts.googleapis.com/css2?family=...` and the older `css?`):
//   parsed here into the faces they ask for, which the engine answers from @fontsource packages
//   (the same Google font files, published on npm).
// Only parsing lives here; which packages exist and reading them is src/node/cdn-files.ts (the
// engine's network policy and the preview servers use it).
// Previews have no network interception, so the page is rewritten instead: `rewriteCdnUrls` points
// every such URL at `<libraryBase>/cdn/<host>/<path>?<query>` on the server that serves the
// preview, which answers it with the same local copy (or redirects to the URL itself when it has
// none). The path keeps the URL's shape, so relative URLs inside an answered file still resolve.

const GSAP_CDN_PATTERNS: RegExp[] = [
  /^https?:\/\/cdn\.jsdelivr\.net\/npm\/gsap(?:@[^/]+)?\/dist\/([\w.-]+\.js)$/,
  /^https?:\/\/unpkg\.com\/gsap(?:@[^/]+)?\/dist\/([\w.-]+\.js)$/,
  /^https?:\/\/cdnjs\.cloudflare\.com\/ajax\/libs\/gsap\/[^/]+\/([\w.-]+\.js)$/,
];

/** The file name in gsap/dist that answers a CDN URL, or undefined when the URL is not one. */
export function gsapDistFileForUrl(url: string): string | undefined {
  const bare = url.split(/[?#]/)[0]!;
  for (const pattern of GSAP_CDN_PATTERNS) {
    const match = pattern.exec(bare);
    if (match) return match[1];
  }
  return undefined;
}

/** A file of an npm package named by a CDN URL. */
export interface NpmFileRequest {
  packageName: string;
  /** As written in the URL (`7`, `3.1.0`, `^1.2`), undefined for "latest". */
  version: string | undefined;
  /**
   * Path inside the package, without a leading slash; "" when the URL names the package only and
   * the CDN picks its default file (`entry` says which convention).
   */
  path: string;
  /** Whose convention picks the file for a bare package URL: a script CDN's or an ES module CDN's. */
  entry: "script" | "module";
}

const PACKAGE_AT_VERSION = String.raw`((?:@[\w.-]+\/)?[\w.-]+)(?:@([^/?#]+))?`;
const NPM_CDN_PATTERN = new RegExp(
  String.raw`^https?:\/\/(?:cdn\.jsdelivr\.net\/npm|unpkg\.com)\/${PACKAGE_AT_VERSION}(?:\/(.*))?$`,
);
/** esm.sh and Skypack: a package (or a file of it) as an ES module. */
const ESM_CDN_PATTERN = new RegExp(
  String.raw`^https?:\/\/(?:esm\.sh|cdn\.skypack\.dev)\/${PACKAGE_AT_VERSION}(?:\/(.*))?$`,
);

interface CdnjsLibrary {
  packageName: string;
  folder: string;
  version?: (cdnjsVersion: string) => string;
}

/** cdnjs libraries whose files are an npm package's: name on cdnjs -> package and folder. */
const CDNJS_LIBRARIES: Record<string, CdnjsLibrary> = {
  "three.js": {
    packageName: "three",
    folder: "build",
    // cdnjs names three's releases r128; npm publishes the same release as 0.128.0.
    version: (v) => (/^r\d+$/.test(v) ? `0.${v.slice(1)}.0` : v),
  },
  d3: { packageName: "d3", folder: "dist" },
  "topojson-client": { packageName: "topojson-client", folder: "dist" },
  animejs: { packageName: "animejs", folder: "lib" },
  "lottie-web": { packageName: "lottie-web", folder: "build/player" },
  bodymovin: { packageName: "lottie-web", folder: "build/player" },
};

/**
 * The npm file a jsdelivr, unpkg, cdnjs, esm.sh or Skypack URL names, or undefined when it names
 * none.
 */
export function npmFileForCdnUrl(url: string): NpmFileRequest | undefined {
  const bare = url.split(/[?#]/)[0]!;
  const script = NPM_CDN_PATTERN.exec(bare);
  const npm = script ?? ESM_CDN_PATTERN.exec(bare);
  if (npm) {
    const path = npm[3] ?? "";
    // jsdelivr's "+esm" and directory listings are made by the CDN, not files of the package;
    // esm.sh's "/v135/..." and Skypack's "/-/..." are its own builds.
    if (
      bare.endsWith("/") ||
      path.includes("+esm") ||
      path.split("/").includes("..") ||
      /^v\d+$/.test(npm[1]!) ||
      npm[1] === "-"
    ) {
      return undefined;
    }
    return {
      packageName: npm[1]!,
      version: npm[2] === undefined ? undefined : decodedVersion(npm[2]),
      path,
      entry: script ? "script" : "module",
    };
  }
  const cdnjs =
    /^https?:\/\/cdnjs\.cloudflare\.com\/ajax\/libs\/([\w.-]+)\/([^/]+)\/([\w.-]+)$/.exec(bare);
  const library = cdnjs ? CDNJS_LIBRARIES[cdnjs[1]!] : undefined;
  if (cdnjs && library) {
    return {
      packageName: library.packageName,
      version: library.version ? library.version(cdnjs[2]!) : cdnjs[2],
      path: `${library.folder}/${cdnjs[3]}`,
      entry: "script",
    };
  }
  return undefined;
}

/** A version as a URL writes it (`%5E4.3.1` for `^4.3.1`). */
function decodedVersion(version: string): string {
  try {
    return decodeURIComponent(version);
  } catch {
    return version;
  }
}

/**
 * Whether an installed version can answer a request for `requested` (as written in a CDN URL):
 * the same major version, and for 0.x the same minor (three 0.147 and 0.160 differ in API).
 * Ranges and tags are read by their first number; "latest" or no version accepts anything.
 */
export function versionSatisfies(installed: string, requested: string | undefined): boolean {
  if (!requested || requested === "latest") return true;
  const want = /(\d+)(?:\.(\d+))?/.exec(requested);
  const have = /^(\d+)\.(\d+)/.exec(installed);
  if (!want || !have) return false;
  if (want[1] !== have[1]) return false;
  if (want[1] === "0") return want[2] === undefined || want[2] === have[2];
  return true;
}

/** One family of a Google Fonts stylesheet request. */
export interface GoogleFontFamily {
  family: string;
  /** Discrete weights asked for; empty when only `weightRange` is, [400] when none are named. */
  weights: number[];
  weightRange?: [number, number];
  italic: boolean;
  normal: boolean;
  /** Axes other than ital/wght (wdth, opsz, ...), which only a variable font has. */
  otherAxes: string[];
}

export interface GoogleFontsRequest {
  families: GoogleFontFamily[];
  display: string | undefined;
}

/**
 * The families, weights and styles a Google Fonts stylesheet URL asks for, or undefined when the
 * URL is not one. Understands css2 (`family=Inter:ital,wght@0,400;1,700`, `wght@100..900`) and
 * the older css (`family=Inter:400,700italic|Lato`).
 */
export function googleFontsRequest(url: string): GoogleFontsRequest | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url.replace(/&amp;/g, "&"));
  } catch {
    return undefined;
  }
  if (parsed.hostname !== "fonts.googleapis.com") return undefined;
  const display = parsed.searchParams.get("display") ?? undefined;
  if (parsed.pathname === "/css2") {
    const families = parsed.searchParams.getAll("family").map(css2Family);
    return families.length ? { families, display } : undefined;
  }
  if (parsed.pathname === "/css") {
    const families = (parsed.searchParams.get("family") ?? "")
      .split("|")
      .filter(Boolean)
      .map(css1Family);
    return families.length ? { families, display } : undefined;
  }
  return undefined;
}

function css2Family(spec: string): GoogleFontFamily {
  const [family, axisSpec] = spec.split(":") as [string, string | undefined];
  const result: GoogleFontFamily = {
    family: family.trim(),
    weights: [],
    italic: false,
    normal: true,
    otherAxes: [],
  };
  if (!axisSpec) {
    result.weights = [400];
    return result;
  }
  const [axesPart, tuplesPart = ""] = axisSpec.split("@") as [string, string | undefined];
  const axes = axesPart.split(",");
  const italAt = axes.indexOf("ital");
  const wghtAt = axes.indexOf("wght");
  result.otherAxes = axes.filter((axis) => axis !== "ital" && axis !== "wght");
  const weights = new Set<number>();
  let sawNormal = italAt < 0;
  for (const tuple of tuplesPart.split(";").filter(Boolean)) {
    const values = tuple.split(",");
    if (italAt >= 0) {
      if (values[italAt] === "1") result.italic = true;
      else sawNormal = true;
    }
    const weight = wghtAt >= 0 ? values[wghtAt] : undefined;
    if (!weight) continue;
    const range = /^(\d+)\.\.(\d+)$/.exec(weight);
    if (range) result.weightRange = [Number(range[1]), Number(range[2])];
    else weights.add(Number(weight));
  }
  result.normal = sawNormal;
  result.weights = [...weights].sort((a, b) => a - b);
  if (!result.weights.length && !result.weightRange) result.weights = [400];
  return result;
}

function css1Family(spec: string): GoogleFontFamily {
  const [family, variants] = spec.split(":") as [string, string | undefined];
  const result: GoogleFontFamily = {
    family: family.trim(),
    weights: [],
    italic: false,
    normal: false,
    otherAxes: [],
  };
  const weights = new Set<number>();
  for (const variant of (variants ?? "400").split(",")) {
    const match = /^(\d+)?(i|italic)?$/.exec(variant.trim());
    if (!match) {
      if (variant.trim() === "regular") weights.add(400);
      continue;
    }
    weights.add(match[1] ? Number(match[1]) : 400);
    if (match[2]) result.italic = true;
    else result.normal = true;
  }
  result.weights = [...weights].sort((a, b) => a - b);
  if (!result.weights.length) result.weights = [400];
  if (!result.italic) result.normal = true;
  return result;
}

/** The npm name fontsource publishes a Google family under (`Libre Franklin` -> libre-franklin). */
export function fontsourceSlug(family: string): string {
  return family
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
}

/** Whether svc may answer `url` from its own copy (then the engine and the previews do). */
export function isLocalCdnUrl(url: string): boolean {
  return (
    gsapDistFileForUrl(url) !== undefined ||
    npmFileForCdnUrl(url) !== undefined ||
    googleFontsRequest(url) !== undefined
  );
}

/** Folder under a preview server's library base that stands for the CDNs. */
export const CDN_LIBRARY_FOLDER = "cdn";

/**
 * Where a preview finds a CDN URL svc may answer: `<libraryBase>/cdn/<host>/<path>?<query>`, or
 * undefined for any other URL. `libraryBase` is a URL or an absolute path (`/__svc/libs`).
 */
export function libraryUrlForCdnUrl(url: string, libraryBase: string): string | undefined {
  const absolute = url.startsWith("//") ? `https:${url}` : url;
  if (!isLocalCdnUrl(absolute)) return undefined;
  return `${libraryBase.replace(/\/+$/, "")}/${CDN_LIBRARY_FOLDER}/${absolute.replace(/^https?:\/\//i, "")}`;
}

/**
 * The CDN URL a request under `<libraryBase>/cdn/` stands for (`rest` is what follows that folder,
 * query included), or undefined when it stands for none svc may answer.
 */
export function cdnUrlForLibraryPath(rest: string): string | undefined {
  const url = `https://${rest.replace(/^\/+/, "")}`;
  return isLocalCdnUrl(url) ? url : undefined;
}

/** CDN URLs as they appear in HTML, CSS and script text (ending at a quote, space, paren or <). */
export const CDN_URL_IN_TEXT =
  /(?:https?:)?\/\/(?:cdn\.jsdelivr\.net|unpkg\.com|cdnjs\.cloudflare\.com|esm\.sh|cdn\.skypack\.dev|fonts\.googleapis\.com)\/[^\s"'`()<>\\]+/gi;

/**
 * `text` (a page, a sub-composition file, a stylesheet) with every URL svc may answer pointed at
 * `libraryBase` (see `libraryUrlForCdnUrl`): script and link URLs, `url()` and `@import` in CSS,
 * string literals in scripts. Other URLs are left as they are.
 */
export function rewriteCdnUrls(text: string, libraryBase: string): string {
  return text.replace(CDN_URL_IN_TEXT, (url) => libraryUrlForCdnUrl(url, libraryBase) ?? url);
}

/**
 * The library files a set of pages may load (issue 41): a preview server that answers
 * `<libraryBase>/cdn/` for anyone (the template's public page) answers only these, not any file
 * of any package svc can read. Built from the pages' own text (their CDN URLs): each URL named,
 * the other page files (scripts, styles, fonts, data, pictures) of the same package and version
 * (a module's relative imports, a plugin loaded by name), and the font files of the Google Fonts
 * families named. Never a package's manifest, sources (.ts) or source maps.
 */
export interface CdnAllowlist {
  urls: Set<string>;
  /** `name@version` as the pages write it (`gsap@3.12.5`, `three@0.160.0`, `d3@` unversioned). */
  packages: Set<string>;
  /** @fontsource packages of the Google Fonts families named. */
  fontPackages: Set<string>;
  /** A GSAP file is named: its other files (plugins) may load, from any CDN svc answers GSAP of. */
  gsap: boolean;
}

/** What a page loads from a library; a source, a map or a manifest is none of it. */
const PAGE_FILE =
  /\.(?:m?js|cjs|css|json|wasm|woff2?|ttf|otf|png|jpe?g|gif|svg|webp|avif|glb|gltf|bin|ktx2|hdr|mp3|wav|ogg)$/i;
const FONT_FILE = /\.(?:woff2?|ttf|otf)$/i;

function absoluteCdnUrl(url: string): string {
  return (url.startsWith("//") ? `https:${url}` : url).replace(/^http:/i, "https:").split("#")[0]!;
}

export function cdnAllowlist(texts: Iterable<string>): CdnAllowlist {
  const list: CdnAllowlist = {
    urls: new Set(),
    packages: new Set(),
    fontPackages: new Set(),
    gsap: false,
  };
  for (const text of texts) {
    for (const [match] of text.matchAll(CDN_URL_IN_TEXT)) {
      const url = absoluteCdnUrl(match);
      if (!isLocalCdnUrl(url)) continue;
      list.urls.add(url);
      if (gsapDistFileForUrl(url)) list.gsap = true;
      const npm = npmFileForCdnUrl(url);
      if (npm) list.packages.add(`${npm.packageName}@${npm.version ?? ""}`);
      for (const family of googleFontsRequest(url)?.families ?? []) {
        const slug = fontsourceSlug(family.family);
        list.fontPackages.add(`@fontsource/${slug}`).add(`@fontsource-variable/${slug}`);
      }
    }
  }
  return list;
}

/** Whether `url` (a CDN URL) is one of the files `list` lets pages load. */
export function cdnAllowlistAllows(list: CdnAllowlist, url: string): boolean {
  const absolute = absoluteCdnUrl(url);
  if (list.urls.has(absolute)) return true;
  if (gsapDistFileForUrl(absolute)) return list.gsap;
  const npm = npmFileForCdnUrl(absolute);
  if (!npm || !PAGE_FILE.test(npm.path) || npm.path.split("/").pop() === "package.json") {
    return false;
  }
  if (list.packages.has(`${npm.packageName}@${npm.version ?? ""}`)) return true;
  return list.fontPackages.has(npm.packageName) && FONT_FILE.test(npm.path);
}
