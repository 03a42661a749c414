// Readiness before frame 0 (SPEC.md section 2): stylesheets loaded, every <img> and every image
// the styles use (backgrounds, masks, ...) decoded, media able to show a frame (readyState >= 2)
// and fonts loaded. Each pending item is named in
// `waiting` so the engine's timeout can say exactly what never arrived. An asset that fails is a
// finding (diagnostics.ts), not a hang: the frame renders without it, as a browser would show it.
import { recordLoadFailure, shortUrl } from "./diagnostics";
import { CSS_URL } from "./project-files";

export interface ReadinessContext {
  waiting: Set<string>;
  /** The runtime's warnings. Assets that fail are findings instead (one message per file). */
  warnings: string[];
}

async function track(
  context: ReadinessContext,
  name: string,
  work: Promise<unknown>,
  onFailure?: (error: unknown) => void,
): Promise<void> {
  context.waiting.add(name);
  try {
    await work;
  } catch (error) {
    onFailure?.(error);
  } finally {
    context.waiting.delete(name);
  }
}

/** load/error of every element, seen from the start: a stylesheet that failed before we looked
 * would otherwise be waited for forever. Installed before the document parses. */
const settled = new WeakMap<EventTarget, "load" | "error">();
export function trackResourceLoads(): void {
  for (const type of ["load", "error"] as const) {
    document.addEventListener(
      type,
      (event) => {
        if (event.target && event.target !== document) settled.set(event.target, type);
      },
      true,
    );
  }
}

/**
 * fetch() calls the page makes while starting (data-driven compositions build their timeline from
 * a JSON file), so readiness can wait for them and name them. Installed before any page script.
 */
const pendingFetches = new Map<Promise<unknown>, string>();
export function trackPageFetches(): void {
  const original = window.fetch.bind(window);
  window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === "string" || input instanceof URL ? String(input) : input.url;
    const request = original(input, init);
    const tracked = request.then(
      (response) =>
        response
          .clone()
          .arrayBuffer()
          .catch(() => undefined),
      () => undefined,
    );
    pendingFetches.set(tracked, `fetch ${shortUrl(url)}`);
    void tracked.finally(() => pendingFetches.delete(tracked));
    return request;
  };
}

/** Wait until the page has no fetch in flight, including ones started by earlier fetches. */
export async function waitForPageFetches(context: ReadinessContext): Promise<void> {
  for (let round = 0; round < 20 && pendingFetches.size > 0; round++) {
    await Promise.all([...pendingFetches].map(([promise, name]) => track(context, name, promise)));
    // Let the page's own then-callbacks (which may fetch again) run first.
    await new Promise<void>((resolve) => setTimeoutReal(() => resolve(), 0));
  }
}

let setTimeoutReal: (callback: () => void, ms: number) => unknown = (callback, ms) =>
  window.setTimeout(callback, ms);
/** The runtime replaces window.setTimeout with a virtual one; readiness needs the real one. */
export function useRealTimers(setTimeoutFn: (callback: () => void, ms: number) => unknown): void {
  setTimeoutReal = setTimeoutFn;
}

function stylesheetLoaded(link: HTMLLinkElement): Promise<void> {
  const state = settled.get(link);
  if (state === "error") return Promise.reject(new Error("failed"));
  if (link.sheet || state === "load") return Promise.resolve();
  return new Promise((resolve, reject) => {
    link.addEventListener("load", () => resolve(), { once: true });
    link.addEventListener("error", () => reject(new Error("failed")), { once: true });
  });
}

function mediaReady(element: HTMLMediaElement): Promise<void> {
  if (element.readyState >= 2) return Promise.resolve();
  // Not networkState: every load starts with a moment of NETWORK_NO_SOURCE (the resource
  // selection algorithm sets it before awaiting a stable state), which is no failure yet.
  if (element.error) return Promise.reject(element.error);
  return new Promise((resolve, reject) => {
    // A failing <source> reports on itself, not on the element; when the last one fails, none plays.
    const sources = element.querySelectorAll("source");
    sources[sources.length - 1]?.addEventListener("error", () => reject(new Error("no source")), {
      once: true,
    });
    const done = () => {
      element.removeEventListener("loadeddata", done);
      element.removeEventListener("canplay", done);
      resolve();
    };
    element.addEventListener("loadeddata", done);
    element.addEventListener("canplay", done);
    element.addEventListener("error", () => reject(element.error ?? new Error("failed")), {
      once: true,
    });
    // preload="none" parks the element; a render needs the first frame now.
    const parked = element.preload === "none";
    if (element.preload !== "auto") element.preload = "auto";
    if (parked || element.networkState === HTMLMediaElement.NETWORK_EMPTY) element.load();
  });
}

function mediaSrc(element: HTMLMediaElement): string | null {
  return (
    element.getAttribute("src") ??
    element.querySelector("source[src]")?.getAttribute("src") ??
    (element.currentSrc || null)
  );
}

/** Style properties whose url() values are pictures the frame draws. */
const STYLE_IMAGE_PROPERTIES = [
  "background-image",
  "mask-image",
  "-webkit-mask-image",
  "border-image-source",
  "list-style-image",
  "content",
];

/**
 * The images the page's styles use, on every element and its ::before and ::after, hidden ones
 * included (a later scene shows them). A browser fetches a CSS image only when a shown element
 * needs it, so one inserted with a composition (a <template>, a data-composition-src file) or
 * shown in a later scene would otherwise still be loading when its frame is drawn: the catalog's
 * code-snippet-dark-modern drew its first frame black, or its background half loaded.
 */
function styleImageUrls(): Set<string> {
  const urls = new Set<string>();
  const page = location.href.split("#")[0];
  const add = (style: CSSStyleDeclaration) => {
    for (const property of STYLE_IMAGE_PROPERTIES) {
      const value = style.getPropertyValue(property);
      if (!value.includes("url(")) continue;
      for (const match of value.matchAll(CSS_URL)) {
        const url = match[2]!;
        // url(#id) names an element of the page (an SVG mask), not a picture to load.
        if (url.startsWith("#") || url.split("#")[0] === page) continue;
        urls.add(url);
      }
    }
  };
  for (const element of Array.from(document.querySelectorAll("*"))) {
    add(getComputedStyle(element));
    add(getComputedStyle(element, "::before"));
    add(getComputedStyle(element, "::after"));
  }
  return urls;
}

function imageDecoded(url: string): Promise<void> {
  const image = new Image();
  image.src = url;
  return image.decode();
}

export async function waitForAssets(context: ReadinessContext): Promise<void> {
  const tasks: Promise<void>[] = [];
  for (const link of Array.from(
    document.querySelectorAll<HTMLLinkElement>("link[rel~=stylesheet]"),
  )) {
    const href = link.getAttribute("href") ?? "";
    tasks.push(
      track(context, `stylesheet ${shortUrl(href)}`, stylesheetLoaded(link), () =>
        recordLoadFailure("stylesheet", link.href || href),
      ),
    );
  }
  for (const image of Array.from(document.images)) {
    const src = image.getAttribute("src");
    if (!src && !image.srcset) continue;
    if (image.loading === "lazy") image.loading = "eager";
    const name = `image ${shortUrl(src ?? image.srcset)}`;
    tasks.push(
      track(context, name, image.decode(), () =>
        recordLoadFailure("image", image.currentSrc || src || image.srcset),
      ),
    );
  }
  for (const url of styleImageUrls()) {
    // data: URLs are named by their start only.
    const name = `image ${shortUrl(url.startsWith("data:") ? url.slice(0, 40) : url)}`;
    const onFailure = url.startsWith("data:") ? undefined : () => recordLoadFailure("image", url);
    tasks.push(track(context, name, imageDecoded(url), onFailure));
  }
  for (const element of Array.from(document.querySelectorAll<HTMLMediaElement>("video, audio"))) {
    const src = mediaSrc(element);
    if (!src) continue;
    const name = `${element.tagName.toLowerCase()} ${shortUrl(src)}`;
    tasks.push(
      track(context, name, mediaReady(element), () =>
        recordLoadFailure(element instanceof HTMLVideoElement ? "video" : "audio", src),
      ),
    );
  }
  await Promise.all([...tasks, waitForFonts(context)]);
  // Images and media change layout, which can start loading more faces.
  await waitForFonts(context);
}

async function waitForFonts(context: ReadinessContext): Promise<void> {
  // Faces declared with @font-face load only once something on screen uses them; text inside a
  // display:none scene would then first render in a fallback font. Load every declared face now.
  document.fonts.forEach((face) => {
    if (face.status === "unloaded") face.load().catch(() => undefined);
  });
  // Layout triggers loads of the faces the page actually uses; fonts.ready only covers loads
  // that have started, so lay out, wait, and look again until nothing is loading.
  for (let round = 0; round < 5; round++) {
    void document.body?.offsetHeight;
    if (document.fonts.status !== "loading") return;
    const loading = new Set<string>();
    document.fonts.forEach((face) => {
      if (face.status === "loading") {
        loading.add(`font ${JSON.stringify(face.family.replace(/^["']|["']$/g, ""))}`);
      }
    });
    if (loading.size === 0) loading.add("fonts");
    for (const name of loading) context.waiting.add(name);
    await document.fonts.ready;
    for (const name of loading) context.waiting.delete(name);
  }
}
