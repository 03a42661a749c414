// The document of <svc-player>'s composition frame: the composition's HTML with the frame script
// (the engine's page runtime plus the player's frame bridge) at the start of <head>, before any
// page script, and every well-known CDN URL svc answers from its own copy (GSAP, npm files, Google
// Fonts; src/shared/cdn.ts) pointed at the serving page's `libraryBase`, so previews work offline
// and draw with the same files as renders. The runtime does the same to the sub-composition files
// it loads (it finds `libraryBase` in its config). The player builds it itself (srcdoc frames) and the desktop preview server serves it
// (served frames, `?svc-frame=1`), so the same injection lives here once. A served frame takes its
// variables from its URL fragment: the document stays the same bytes for every value, the server
// never parses them, and there is no URL length limit of the server's to hit.
import { rewriteCdnUrls } from "./cdn";

/** Query parameter that asks the preview server for the frame document instead of the file. */
export const FRAME_QUERY = "svc-frame";
/** Fragment parameter of a served frame's URL that carries its variables (JSON). */
export const FRAME_VARIABLES_PARAM = "svc-variables";
/** Fragment parameter of a served frame's URL: the aspect ratio to lay the page out at. */
export const FRAME_ASPECT_PARAM = "svc-aspect";

/**
 * The page viewport of each aspect ratio, as a render draws it at 1080p (shared/render-options
 * outputSize; repeated here because the player's bundle must not pull in zod): a preview at an
 * aspect ratio gets the same `data-aspect-ratio` marks and viewport as the render of that size.
 */
const ASPECT_VIEWPORTS: Record<string, [number, number]> = {
  "16:9": [1920, 1080],
  "9:16": [1080, 1920],
  "1:1": [1080, 1080],
};

export interface FrameAspect {
  ratio: string;
  width: number;
  height: number;
}

/** The runtime's aspect config for a ratio, or undefined for none or an unknown one. */
export function frameAspect(ratio: string | null | undefined): FrameAspect | undefined {
  const size = ratio ? ASPECT_VIEWPORTS[ratio] : undefined;
  return size && ratio ? { ratio, width: size[0], height: size[1] } : undefined;
}

/**
 * Sets the runtime's config in a served frame: the variables from the frame's own URL fragment
 * (see `servedFrameUrl`; a value that is not a JSON object means none, only the player writes the
 * fragment) and the library base (a path on the server) as a URL.
 */
export function servedFrameConfigScript(libraryBase: string): string {
  return (
    `window.__svcConfig={libraryBase:new URL(${scriptString(libraryBase)},location.href).href,` +
    `variables:(function(){try{var v=JSON.parse(new URLSearchParams(location.hash.slice(1)).get(${JSON.stringify(FRAME_VARIABLES_PARAM)})||"{}");` +
    `return v&&typeof v==="object"&&!Array.isArray(v)?v:{}}catch(e){return{}}})(),` +
    `aspect:(function(){var a=new URLSearchParams(location.hash.slice(1)).get(${JSON.stringify(FRAME_ASPECT_PARAM)});` +
    `var s=${JSON.stringify(ASPECT_VIEWPORTS)}[a];return s?{ratio:a,width:s[0],height:s[1]}:undefined})()};`
  );
}

/** The runtime config of a srcdoc frame, inline (`libraryBase` a URL). */
export function inlineFrameConfigScript(
  variables: Record<string, unknown>,
  libraryBase?: string,
  aspect?: FrameAspect,
): string {
  return `window.__svcConfig=${scriptString({ variables, ...(libraryBase ? { libraryBase } : {}), ...(aspect ? { aspect } : {}) })};`;
}

/** `value` as JSON that is safe inside a <script>. */
function scriptString(value: unknown): string {
  // Escaping "<" keeps "</script>" and "<!--" in a value from ending the script early.
  return JSON.stringify(value).replace(/</g, "\\u003c");
}

/** The URL of the served frame document for the composition at `src` (absolute). */
export function servedFrameUrl(
  src: string,
  variables: Record<string, unknown>,
  aspect?: FrameAspect,
): string {
  const url = new URL(src);
  url.searchParams.set(FRAME_QUERY, "1");
  url.hash = new URLSearchParams({
    [FRAME_VARIABLES_PARAM]: JSON.stringify(variables),
    ...(aspect ? { [FRAME_ASPECT_PARAM]: aspect.ratio } : {}),
  }).toString();
  return url.href;
}

export interface FrameDocumentOptions {
  /** The classic script to run first: a config script followed by the frame script. */
  script: string;
  /** `<base href>` for documents without a URL of their own (srcdoc). */
  baseUrl?: string;
  /**
   * Where the serving page answers CDN URLs (`<libraryBase>/cdn/<host>/<path>`, see
   * src/shared/cdn.ts); CDN URLs stay as they are without it. The config script must name the
   * same base for the runtime.
   */
  libraryBase?: string;
}

/** `source` with the script (and base) at the start of <head> and CDN URLs at `libraryBase`. */
export function buildFrameDocument(source: string, options: FrameDocumentOptions): string {
  const { libraryBase } = options;
  const html = libraryBase ? rewriteCdnUrls(source, libraryBase) : source;
  const script = options.script.replace(/<\/script/gi, "<\\/script");
  const base =
    options.baseUrl === undefined ? "" : `<base href="${options.baseUrl.replace(/"/g, "&quot;")}">`;
  const injected = `${base}<script>${script}</script>`;
  // Right after <head>, else after <html>, else first.
  for (const tag of [/<head\b[^>]*>/i, /<html\b[^>]*>/i]) {
    const match = tag.exec(html);
    if (!match) continue;
    const at = match.index + match[0].length;
    return html.slice(0, at) + injected + html.slice(at);
  }
  return injected + html;
}
