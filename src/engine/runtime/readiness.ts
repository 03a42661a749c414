// Readiness before frame 0 (SPEC.md section 2): stylesheets loaded, every <img> decoded, media
// able to show a frame (readyState >= 2) and fonts loaded. Each pending item is named in
// `waiting` so the engine's timeout can say exactly what never arrived. An asset that fails is a
// warning, not a hang: the frame renders without it, as a browser would show it.

export interface ReadinessContext {
  waiting: Set<string>;
  warnings: string[];
}

function shortUrl(url: string): string {
  try {
    const parsed = new URL(url, location.href);
    return parsed.origin === location.origin ? parsed.pathname + parsed.search : parsed.href;
  } catch {
    return url;
  }
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

function stylesheetLoaded(link: HTMLLinkElement): Promise<void> {
  if (link.sheet) return Promise.resolve();
  return new Promise((resolve, reject) => {
    link.addEventListener("load", () => resolve(), { once: true });
    link.addEventListener("error", () => reject(new Error("failed")), { once: true });
  });
}

function mediaReady(element: HTMLMediaElement): Promise<void> {
  if (element.readyState >= 2) return Promise.resolve();
  return new Promise((resolve, reject) => {
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
    if (element.preload !== "auto") element.preload = "auto";
    if (element.networkState === HTMLMediaElement.NETWORK_EMPTY) element.load();
  });
}

function mediaSrc(element: HTMLMediaElement): string | null {
  return (
    element.getAttribute("src") ??
    element.querySelector("source[src]")?.getAttribute("src") ??
    (element.currentSrc || null)
  );
}

export async function waitForAssets(context: ReadinessContext): Promise<void> {
  const tasks: Promise<void>[] = [];
  for (const link of Array.from(
    document.querySelectorAll<HTMLLinkElement>("link[rel~=stylesheet]"),
  )) {
    const href = link.getAttribute("href") ?? "";
    tasks.push(
      track(context, `stylesheet ${shortUrl(href)}`, stylesheetLoaded(link), () => {
        context.warnings.push(`stylesheet ${shortUrl(href)} could not be loaded`);
      }),
    );
  }
  for (const image of Array.from(document.images)) {
    const src = image.getAttribute("src");
    if (!src && !image.srcset) continue;
    if (image.loading === "lazy") image.loading = "eager";
    const name = `image ${shortUrl(src ?? image.srcset)}`;
    tasks.push(
      track(context, name, image.decode(), () => {
        context.warnings.push(`${name} could not be loaded or decoded`);
      }),
    );
  }
  for (const element of Array.from(document.querySelectorAll<HTMLMediaElement>("video, audio"))) {
    const src = mediaSrc(element);
    if (!src) continue;
    const name = `${element.tagName.toLowerCase()} ${shortUrl(src)}`;
    tasks.push(
      track(context, name, mediaReady(element), () => {
        context.warnings.push(`${name} could not be loaded`);
      }),
    );
  }
  await Promise.all(tasks);
  await waitForFonts(context);
}

async function waitForFonts(context: ReadinessContext): Promise<void> {
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
