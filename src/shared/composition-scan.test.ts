import { describe, expect, it } from "vitest";
import { detectAspectRatio, scanCompositionHtml } from "./composition-scan";

describe("scanCompositionHtml", () => {
  it("reads size, duration, fps and the variables schema of the root", () => {
    const html = `<!doctype html><html data-composition-variables='[{"id":"title","type":"string","label":"Title","default":"a > b"}]'>
      <body><div id="stage" data-composition-id="main" data-width="1080" data-height="1920" data-duration="4.5" data-fps="25"></div></body></html>`;
    expect(scanCompositionHtml(html)).toEqual({
      ok: true,
      scan: {
        compositionId: "main",
        width: 1080,
        height: 1920,
        duration: 4.5,
        fpsHint: 25,
        variablesJson: '[{"id":"title","type":"string","label":"Title","default":"a > b"}]',
      },
    });
  });

  it("ignores roots inside templates, scripts and comments", () => {
    const html = `<!-- <div data-composition-id="x" data-width="1" data-height="1"> -->
      <template><div data-composition-id="sub" data-width="10" data-height="10"></div></template>
      <script>const s = '<div data-composition-id="js" data-width="2" data-height="2">';</script>
      <div data-composition-id="real" data-width="1920" data-height="1080"></div>`;
    const result = scanCompositionHtml(html);
    expect(result.ok && result.scan.compositionId).toBe("real");
    expect(result.ok && result.scan.duration).toBeUndefined();
  });

  it("takes the first element with a size as the root when <html> is marked too", () => {
    // The reference's focus-rack demo: <html data-composition-id> without a size, then the root.
    const html = `<html lang="en" data-composition-id="demo" data-composition-duration="3.5"><body>
      <div id="root" data-composition-id="demo" data-width="1920" data-height="1080" data-duration="3.5">
        <div data-composition-id="inner" data-composition-src="./inner.html" data-width="1459" data-height="778"></div>
      </div></body></html>`;
    expect(scanCompositionHtml(html)).toMatchObject({
      ok: true,
      scan: { compositionId: "demo", width: 1920, height: 1080, duration: 3.5 },
    });
  });

  it("explains how to fix a missing root or size", () => {
    expect(scanCompositionHtml("<p>hi</p>")).toMatchObject({
      ok: false,
      hint: expect.stringContaining("data-composition-id"),
    });
    expect(scanCompositionHtml('<div data-composition-id="a" data-width="0"></div>')).toMatchObject(
      {
        ok: false,
        hint: expect.stringContaining("data-width"),
      },
    );
  });
});

describe("detectAspectRatio", () => {
  it("matches the three ratios within 0.05", () => {
    expect(detectAspectRatio(1920, 1080)).toBe("16:9");
    expect(detectAspectRatio(1280, 720)).toBe("16:9");
    expect(detectAspectRatio(1080, 1920)).toBe("9:16");
    expect(detectAspectRatio(1000, 1000)).toBe("1:1");
    expect(detectAspectRatio(1040, 1000)).toBe("1:1");
    expect(detectAspectRatio(1200, 1000)).toBeUndefined();
  });
});
