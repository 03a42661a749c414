// The local copies svc answers well-known CDN URLs with (src/shared/cdn.ts says which URLs): GSAP
// from the `gsap` package; other npm files on jsdelivr/unpkg/esm.sh/Skypack (and a few cdnjs
// libraries) from the npm registry through the library cache (library-cache.ts), or an installed
// package of a compatible version when the registry cannot be reached; Google Fonts stylesheets from @fontsource packages,
// built the way Google answers them (one @font-face per subset with its unicode-range) with font
// files at their jsdelivr URLs, which are answered the same way. One resolver for every place
// that needs it: the engine's network policy (renders), the desktop app's preview server and the
// template's preview page (`libraryResponse`, for <svc-player>'s `library-base`), and the bench.
import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import {
  cdnUrlForLibraryPath,
  fontsourceSlug,
  googleFontsRequest,
  gsapDistFileForUrl,
  libraryUrlForCdnUrl,
  npmFileForCdnUrl,
  versionSatisfies,
  type GoogleFontFamily,
} from "../shared/cdn";
import { contentTypeFor } from "../shared/content-types";
import { libraryCache, type LibraryProblem, type ResolvedLibrary } from "./library-cache";

let gsapDistDir: string | undefined;

function localGsapDir(): string {
  if (!gsapDistDir) {
    const require = createRequire(import.meta.url);
    gsapDistDir = join(dirname(require.resolve("gsap/package.json")), "dist");
  }
  return gsapDistDir;
}

/** The local file that answers a GSAP CDN URL, or undefined when the URL is not one. */
export function gsapFileForUrl(url: string): string | undefined {
  const file = gsapDistFileForUrl(url);
  return file ? gsapDistFile(file) : undefined;
}

/** A file of the local GSAP package's dist folder by name (`gsap.min.js`). */
function gsapDistFile(name: string): string | undefined {
  return /^[\w-][\w.-]*\.js$/.test(name) ? join(localGsapDir(), name) : undefined;
}

interface InstalledPackage {
  dir: string;
  version: string;
}

const installedPackages = new Map<string, InstalledPackage | null>();

/**
 * An npm package svc can read files of, found the way Node finds it from this module (its
 * `exports` may hide package.json from require.resolve, so the folders are searched directly).
 */
export function installedPackage(name: string): InstalledPackage | undefined {
  if (!/^(?:@[\w.-]+\/)?[\w.-]+$/.test(name)) return undefined;
  let found = installedPackages.get(name);
  if (found === undefined) {
    found = null;
    const require = createRequire(import.meta.url);
    for (const modules of require.resolve.paths(name) ?? []) {
      const manifest = join(modules, name, "package.json");
      if (!existsSync(manifest)) continue;
      const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version: string };
      found = { dir: join(modules, name), version };
      break;
    }
    installedPackages.set(name, found);
  }
  return found ?? undefined;
}

/** The local file that answers a jsdelivr/unpkg/cdnjs URL of an npm file, or undefined. */
export function npmFileForUrl(url: string): string | undefined {
  const request = npmFileForCdnUrl(url);
  if (!request) return undefined;
  const installed = installedPackage(request.packageName);
  if (!installed || !versionSatisfies(installed.version, request.version)) return undefined;
  const file = join(installed.dir, request.path);
  return file.startsWith(installed.dir + "/") && existsSync(file) ? file : undefined;
}

/** A font file a local Google Fonts stylesheet uses. */
export interface FontFile {
  packageName: string;
  version: string;
  /** Path inside the package (`files/inter-latin-400-normal.woff2`). */
  path: string;
  /** The file on this machine. */
  file: string;
}

/** Where a font file is fetched from by default: its jsdelivr URL, which svc answers locally. */
export function jsdelivrFontUrl(font: FontFile): string {
  return `https://cdn.jsdelivr.net/npm/${font.packageName}@${font.version}/${font.path}`;
}

/**
 * The stylesheet a Google Fonts URL stands for, built from @fontsource packages, or undefined when
 * the URL is not one or a family it asks for is not installed. `fontUrl` says how the stylesheet
 * refers to each font file (the engine: its jsdelivr URL; the bench: a copied file).
 */
export function googleFontsCss(
  url: string,
  fontUrl: (font: FontFile) => string = jsdelivrFontUrl,
): { css: string; fonts: FontFile[] } | undefined {
  const request = googleFontsRequest(url);
  if (!request) return undefined;
  const parts: string[] = [];
  const fonts: FontFile[] = [];
  for (const family of request.families) {
    const faces = fontsourceFaces(family);
    if (!faces) return undefined;
    for (const { installed, packageName, cssFile } of faces) {
      const css = readFileSync(join(installed.dir, cssFile), "utf8")
        .replace(/font-family:\s*'[^']*'/g, `font-family: '${family.family.replace(/'/g, "")}'`)
        .replace(/font-display:\s*\w+/g, `font-display: ${request.display ?? "auto"}`)
        .replace(/url\(\.\/(files\/[\w.-]+)\)/g, (_whole, path: string) => {
          const font = {
            packageName,
            version: installed.version,
            path,
            file: join(installed.dir, path),
          };
          fonts.push(font);
          return `url(${fontUrl(font)})`;
        });
      parts.push(css);
    }
  }
  return { css: parts.join("\n"), fonts };
}

/** The fontsource stylesheets that hold the faces a family request asks for. */
function fontsourceFaces(
  family: GoogleFontFamily,
): { installed: InstalledPackage; packageName: string; cssFile: string }[] | undefined {
  const slug = fontsourceSlug(family.family);
  const staticName = `@fontsource/${slug}`;
  const variableName = `@fontsource-variable/${slug}`;
  const staticPackage = installedPackage(staticName);
  const variablePackage = installedPackage(variableName);
  const styles = [...(family.normal ? [""] : []), ...(family.italic ? ["-italic"] : [])];
  const wantsVariable = family.weightRange !== undefined || family.otherAxes.length > 0;
  const variableFaces = () => {
    if (!variablePackage) return undefined;
    const axis = family.otherAxes.length ? "full" : "wght";
    return styles
      .map((style) =>
        [`${axis}${style}.css`, `wght${style}.css`, `index.css`].find((file) =>
          existsSync(join(variablePackage.dir, file)),
        ),
      )
      .filter((file): file is string => file !== undefined)
      .map((cssFile) => ({ installed: variablePackage, packageName: variableName, cssFile }));
  };
  if (wantsVariable && variablePackage) return variableFaces();
  if (staticPackage) {
    const [low, high] = family.weightRange ?? [0, 0];
    const weights = family.weightRange
      ? [100, 200, 300, 400, 500, 600, 700, 800, 900].filter((w) => w >= low && w <= high)
      : family.weights;
    const faces = weights.flatMap((weight) =>
      styles
        .map((style) => `${weight}${style}.css`)
        .filter((file) => existsSync(join(staticPackage.dir, file)))
        .map((cssFile) => ({ installed: staticPackage, packageName: staticName, cssFile })),
    );
    return faces.length ? faces : undefined;
  }
  return variableFaces();
}

export interface CdnFile {
  body: Buffer;
  contentType: string;
}

/** svc's answer to a CDN URL: the file, which npm version it is, or why there is none. */
export interface CdnAnswer {
  file: CdnFile | undefined;
  /** The npm file that answered (from the registry or its cache). */
  library?: ResolvedLibrary;
  /** Why an npm file could not be had (a version not on npm, the registry unreachable). */
  problem?: LibraryProblem;
}

/**
 * svc's answer to a well-known CDN URL: GSAP from its own package; a Google Fonts stylesheet from
 * @fontsource; any other npm file from the npm registry through the library cache, or, when that
 * cannot answer, an installed package of a compatible version.
 */
export async function cdnAnswer(
  url: string,
  fontUrl: (font: FontFile) => string = jsdelivrFontUrl,
  signal?: AbortSignal,
): Promise<CdnAnswer> {
  const gsap = gsapFileForUrl(url);
  if (gsap) {
    const body = await readFile(gsap).catch(() => undefined);
    return { file: body ? { body, contentType: "text/javascript; charset=utf-8" } : undefined };
  }
  const fonts = googleFontsCss(url, fontUrl);
  if (fonts) {
    return { file: { body: Buffer.from(fonts.css), contentType: "text/css; charset=utf-8" } };
  }
  const request = npmFileForCdnUrl(url);
  if (!request) return { file: undefined };
  const answer = await libraryCache().file(request, signal);
  if (answer.ok) {
    const { body, ...library } = answer.file;
    return { file: { body, contentType: contentTypeFor(library.path) }, library };
  }
  const installed = npmFileForUrl(url);
  if (installed) {
    return { file: { body: await readFile(installed), contentType: contentTypeFor(installed) } };
  }
  return { file: undefined, problem: answer.problem };
}

/**
 * The local answer to a well-known CDN URL (GSAP, an npm file, a Google Fonts stylesheet), or
 * undefined when svc has no copy of it.
 */
export async function cdnResponse(
  url: string,
  fontUrl: (font: FontFile) => string = jsdelivrFontUrl,
): Promise<CdnFile | undefined> {
  return (await cdnAnswer(url, fontUrl)).file;
}

/**
 * The answer to a request for `<libraryBase>/cdn/<rest>`, where a preview's page finds the CDN
 * URLs `rewriteCdnUrls` (src/shared/cdn.ts) pointed there: the local copy, with a Google Fonts
 * stylesheet's font files under `libraryBase` too; a redirect to the CDN URL itself when svc has
 * no copy (a package it does not ship), so the page behaves as it would without the rewrite; or
 * undefined when `rest` names no CDN URL svc answers (a 404).
 */
export async function libraryResponse(
  rest: string,
  libraryBase: string,
  /** Which CDN URLs may be answered at all (`cdnAllowlist`); default every one svc has. */
  allows: (url: string) => boolean | Promise<boolean> = () => true,
): Promise<CdnFile | { redirect: string } | undefined> {
  const url = cdnUrlForLibraryPath(rest);
  if (!url || !(await allows(url))) return undefined;
  const local = await cdnResponse(
    url,
    (font) => libraryUrlForCdnUrl(jsdelivrFontUrl(font), libraryBase) ?? jsdelivrFontUrl(font),
  ).catch(() => undefined);
  return local ?? { redirect: url };
}
