// Layout as the reference runtime does it: a root is positioned at its declared size and clips,
// its clips and composition hosts are positioned absolutely and sized from their data-width /
// data-height where CSS gives them no size, and a mounted host and its inner root take their
// declared size unless sized inline.

export function numberAttr(element: Element, name: string): number | undefined {
  const raw = element.getAttribute(name);
  if (raw === null || raw.trim() === "") return undefined;
  const value = Number.parseFloat(raw);
  return Number.isFinite(value) ? value : undefined;
}

const NOT_LAID_OUT = new Set(["SCRIPT", "STYLE", "LINK", "META"]);

/**
 * The reference runtime's layout of a root: the root is positioned and clips its overflow at its
 * declared size, and each of its children with `data-start` (clips, nested composition hosts,
 * media) is positioned absolutely, sized from `data-width`/`data-height` only where its CSS gives
 * it no size (else the full root). A host's `left`/`top` from CSS then apply, and its content
 * (`position: absolute; inset: 0`, container queries) fills the host, not the whole frame.
 */
export function layOutRootChildren(root: HTMLElement): void {
  if (!root.style.position) root.style.position = "relative";
  root.style.overflow = "hidden";
  const width = numberAttr(root, "data-width");
  const height = numberAttr(root, "data-height");
  if (width !== undefined) root.style.width = `${width}px`;
  if (height !== undefined) root.style.height = `${height}px`;
  for (const child of Array.from(root.children)) {
    if (!(child instanceof HTMLElement) || NOT_LAID_OUT.has(child.tagName)) continue;
    if (!child.hasAttribute("data-start")) continue;
    const style = child.style;
    const hidden = style.getPropertyValue("display") === "none";
    const priority = style.getPropertyPriority("display");
    if (hidden) style.removeProperty("display");
    const computed = getComputedStyle(child);
    if (computed.position !== "absolute" && computed.position !== "fixed") {
      style.position = "absolute";
    }
    if (child.tagName !== "AUDIO") {
      // `computed` is live: these read the size the element has now that it is absolute.
      const declaredWidth = numberAttr(child, "data-width");
      const declaredHeight = numberAttr(child, "data-height");
      const noWidth = computed.width === "0px" || computed.width === "auto";
      const noHeight = computed.height === "0px" || computed.height === "auto";
      if (!style.width && noWidth) {
        style.width = declaredWidth !== undefined ? `${declaredWidth}px` : "100%";
      }
      if (!style.height && noHeight) {
        style.height = declaredHeight !== undefined ? `${declaredHeight}px` : "100%";
      }
    }
    if (hidden) style.setProperty("display", "none", priority);
  }
}

/** Host and inner root take their declared size unless the author already sized them inline. */
export function sizeElement(element: HTMLElement): void {
  const width = numberAttr(element, "data-width");
  const height = numberAttr(element, "data-height");
  if (width !== undefined && !element.style.width) element.style.width = `${width}px`;
  if (height !== undefined && !element.style.height) element.style.height = `${height}px`;
}
