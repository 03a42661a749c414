// The document of <svc-player>'s composition frame: the composition's HTML with the frame script
// (the engine's page runtime plus the player's frame bridge) at the start of <head>, before any
// page script, and well-known GSAP CDN URLs pointed at svc's own copy so previews work offline like
// renders do. The player builds it itself (srcdoc frames) and the desktop preview server serves it
// (served frames, `?svc-frame=1`), so the same injection lives here once. A served frame takes its
// variables from its URL fragment: the document stays the same bytes for every value, the server
// never parses them, and there is no URL length limit of the server's to hit.
import { gsapDistFileForUrl } from "./cdn";

/** Query parameter that asks the preview server for the frame document instead of the file. */
export const FRAME_QUERY = "svc-frame";
/** Fragment parameter of a served frame's URL that carries its variables (JSON). */
export const FRAME_VARIABLES_PARAM = "svc-variables";

/**
 * Sets the runtime's config from a served frame's own URL fragment (see `servedFrameUrl`). A value
 * that is not a JSON object means no variables: only the player writes the fragment.
 */
export const SERVED_FRAME_CONFIG_SCRIPT =
  `window.__svcConfig={variables:(function(){try{var v=JSON.parse(new URLSearchParams(location.hash.slice(1)).get(${JSON.stringify(FRAME_VARIABLES_PARAM)})||"{}");` +
  `return v&&typeof v==="object"&&!Array.isArray(v)?v:{}}catch(e){return{}}})()};`;

/** The runtime config of a srcdoc frame, inline. */
export function inlineFrameConfigScript(variables: Record<string, unknown>): string {
  // Escaping "<" keeps "</script>" and "<!--" in a value from ending the script early.
  return `window.__svcConfig=${JSON.stringify({ variables }).replace(/</g, "\\u003c")};`;
}

/** The URL of the served frame document for the composition at `src` (absolute). */
export function servedFrameUrl(src: string, variables: Record<string, unknown>): string {
  const url = new URL(src);
  url.searchParams.set(FRAME_QUERY, "1");
  url.hash = new URLSearchParams({ [FRAME_VARIABLES_PARAM]: JSON.stringify(variables) }).toString();
  return url.href;
}

export interface FrameDocumentOptions {
  /** The classic script to run first: a config script followed by the frame script. */
  script: string;
  /** `<base href>` for documents without a URL of their own (srcdoc). */
  baseUrl?: string;
  /** Where GSAP copies live (`<libraryBase>/gsap/<file>`); CDN URLs stay as they are without it. */
  libraryBase?: string;
}

/** `source` with the script (and base) at the start of <head> and GSAP pointed at `libraryBase`. */
export function buildFrameDocument(source: string, options: FrameDocumentOptions): string {
  const { libraryBase } = options;
  const html = libraryBase
    ? source.replace(
        /(<script\b[^>]*\bsrc=["'])([^"']+)(["'])/gi,
        (whole, before: string, url: string, after: string) => {
          const file = gsapDistFileForUrl(url);
          return file ? `${before}${libraryBase.replace(/\/$/, "")}/gsap/${file}${after}` : whole;
        },
      )
    : source;
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
