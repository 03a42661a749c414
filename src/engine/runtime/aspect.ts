// The aspect ratio contract of docs/composition-format.md: before any script of the page runs,
// `data-aspect-ratio` ("16:9", "9:16" or "1:1") is on <html> and on the root composition element
// (the first `[data-composition-id]`), and the root's data-width/data-height are the viewport the
// page is drawn at, so a composition authored at 16:9 and rendered at 9:16 lays out in a 1080x1920
// box and adapts with ordinary CSS (`[data-aspect-ratio="9:16"] .title { ... }`).
// The runtime runs at document creation, before the parser has made any element, so the marks are
// set from a MutationObserver: its callbacks run at the microtask checkpoint the parser performs
// before each script, i.e. before the page's first script can look.
import type { PageAspect } from "./types";

export function markAspectRatio(aspect: PageAspect): void {
  let rootMarked = false;
  const mark = (): boolean => {
    const html = document.documentElement;
    if (html && html.getAttribute("data-aspect-ratio") !== aspect.ratio) {
      html.setAttribute("data-aspect-ratio", aspect.ratio);
    }
    const root = document.querySelector("[data-composition-id]");
    if (root && !rootMarked) {
      rootMarked = true;
      root.setAttribute("data-aspect-ratio", aspect.ratio);
      root.setAttribute("data-width", String(aspect.width));
      root.setAttribute("data-height", String(aspect.height));
    }
    return rootMarked;
  };
  if (mark()) return;
  const observer = new MutationObserver(() => {
    if (mark()) observer.disconnect();
  });
  observer.observe(document, { childList: true, subtree: true });
  document.addEventListener("DOMContentLoaded", () => {
    mark();
    observer.disconnect();
  });
}
