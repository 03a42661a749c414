// The project's files as a page sees them: the URL of a project path, a fetch of our own that the
// page's readiness tracking does not count, and what a relative path in a sub-composition file
// means (the reference's sibling rule), used when compositions.ts mounts that file.

/** Our own requests stay out of the page's pending-fetch tracking (readiness.ts). */
export const realFetch = window.fetch.bind(window);

/**
 * Where `src` of a host points: relative paths resolve from the project root. That is the origin
 * the project is served on (renders, the preview server); in a srcdoc preview frame, whose origin
 * is opaque, it is the folder of the entry file its <base> names.
 */
export function projectUrl(path: string): string {
  const trimmed = path.trim();
  if (/^[a-z][a-z\d+.-]*:/i.test(trimmed) || trimmed.startsWith("//")) return trimmed;
  const root =
    location.origin === "null" ? new URL(".", document.baseURI).href : `${location.origin}/`;
  return new URL(trimmed.replace(/^\.\//, "").replace(/^\/+/, ""), root).href;
}

/** A CSS `url(...)` value, quoted or not: group 2 is the address. */
export const CSS_URL = /\burl\(\s*(["']?)([^)"'\s](?:[^)"']*[^)"'\s])?)\1\s*\)/g;

function isRelativePath(value: string): boolean {
  return value !== "" && !/^([a-z][a-z\d+.-]*:|\/|#)/i.test(value);
}

/**
 * Paths in a file below the project root mean what the reference makes of them: `../x` is
 * relative to the file; any other relative path is too when that file exists next to it
 * (`compositions/assets/font.woff2` for `assets/font.woff2` in compositions/a.html), else it is
 * relative to the project root. Covers src/href attributes (scripts too), style sheets and inline
 * styles; existence is asked of the server, all at once.
 */
export async function resolveSiblingPaths(
  fragment: DocumentFragment,
  fileUrl: string,
  scripts: HTMLScriptElement[],
): Promise<void> {
  const fileDir = new URL(".", fileUrl).href;
  if (fileDir === projectUrl("")) return;
  const candidates = new Set<string>();
  const attributes: [Element, string, string][] = [];
  for (const element of [...Array.from(fragment.querySelectorAll("[src],[href]")), ...scripts]) {
    for (const attr of ["src", "href"]) {
      const value = element.getAttribute(attr)?.trim();
      if (value && isRelativePath(value)) {
        attributes.push([element, attr, value]);
        candidates.add(value);
      }
    }
  }
  const styled = [
    ...Array.from(fragment.querySelectorAll("style")).map((style) => ({ style, inline: false })),
    ...Array.from(fragment.querySelectorAll("[style]")).map((style) => ({ style, inline: true })),
  ];
  for (const { style, inline } of styled) {
    const text = inline ? (style.getAttribute("style") ?? "") : (style.textContent ?? "");
    for (const match of text.matchAll(CSS_URL)) {
      if (isRelativePath(match[2]!)) candidates.add(match[2]!);
    }
  }
  const resolved = new Map<string, string>();
  await Promise.all(
    Array.from(candidates, async (path) => {
      const sibling = new URL(path, fileUrl).href;
      if (path.startsWith("../")) {
        resolved.set(path, sibling);
        return;
      }
      const found = await realFetch(sibling, { method: "HEAD" }).then(
        (response) => response.ok,
        () => false,
      );
      if (found) resolved.set(path, sibling);
    }),
  );
  if (resolved.size === 0) return;
  for (const [element, attr, value] of attributes) {
    const target = resolved.get(value);
    if (target) element.setAttribute(attr, target);
  }
  const rewrite = (text: string) =>
    text.replace(CSS_URL, (whole, quote: string, path: string) => {
      const target = resolved.get(path);
      return target ? `url(${quote}${target}${quote})` : whole;
    });
  for (const { style, inline } of styled) {
    if (inline) style.setAttribute("style", rewrite(style.getAttribute("style") ?? ""));
    else style.textContent = rewrite(style.textContent ?? "");
  }
}
