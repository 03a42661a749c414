// Text that fits (issue 38): a page whose words come from a form can be given words longer than
// its layout was drawn for. `__svcFitTexts(selector, scope)` shrinks the matching texts together,
// in steps of 5% down to 45%, until every one lies inside the frame (less a 2% margin), and does
// it again when the frame is resized (a preview's frame may get its size after the page loads).
// Measured with the scope's transforms off, so an animation's start state does not count. In the
// runtime, not in each page, so every template fits its words the same way in preview and render.
declare global {
  interface Window {
    __svcFitTexts?: (selector: string, scope?: string) => void;
  }
}

function fitOnce(selector: string, scope: string): void {
  const margin = Math.min(innerWidth, innerHeight) * 0.02;
  const texts = Array.from(document.querySelectorAll<HTMLElement>(selector));
  const still = document.createElement("style");
  still.textContent = `${scope} * { transform: none !important; }`;
  const outside = () =>
    texts.some((text) => {
      const range = document.createRange();
      range.selectNodeContents(text);
      const box = range.getBoundingClientRect();
      return (
        box.width > 0 &&
        (box.top < margin ||
          box.left < margin ||
          box.bottom > innerHeight - margin ||
          box.right > innerWidth - margin)
      );
    });
  document.head.append(still);
  texts.forEach((text) => (text.style.zoom = ""));
  for (let zoom = 0.95; zoom > 0.4 && outside(); zoom -= 0.05) {
    texts.forEach((text) => (text.style.zoom = String(zoom)));
  }
  still.remove();
}

export function installFitTexts(): void {
  window.__svcFitTexts = (selector, scope = "body") => {
    fitOnce(selector, scope);
    addEventListener("resize", () => fitOnce(selector, scope));
  };
}
