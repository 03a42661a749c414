// In a preview, a sub-composition file's CDN URLs (a Google Fonts link, an npm font file in its
// CSS) are pointed at the page's library base before the file is mounted, as the frame document's
// are, so the preview draws with svc's copies. (In a render there is no library base: files are
// mounted as written, as the other runtime tests show, and the engine's network policy answers.)
import { describe, expect, it } from "vitest";
import { libraryResponse } from "../../node/cdn-files";
import { html, ORIGIN, open, usePageBrowser, type Files } from "../testing/runtime-page";

usePageBrowser();

const FONTS_URL = "https://fonts.googleapis.com/css2?family=Anton&display=block";
const FONT_URL =
  "https://cdn.jsdelivr.net/npm/@fontsource/anton@5/files/anton-latin-400-normal.woff2";

const CARD = `<!doctype html><html><head>
<link rel="stylesheet" href="${FONTS_URL}">
<style>@font-face { font-family: "Pinned"; src: url(${FONT_URL}) format("woff2"); }
.pinned { font: 40px Pinned; }</style>
</head><body><div data-composition-id="card" data-width="640" data-height="360" data-duration="1">
<p class="pinned">Slam</p>
<script>window.__timelines["card"] = gsap.timeline({ paused: true });</script>
</div></body></html>`;

/** The library's answer for the card's pinned font file, at its path under /libs/cdn/. */
async function libraryFiles(): Promise<Files> {
  const rest = FONT_URL.slice("https://".length);
  const answer = await libraryResponse(rest, `${ORIGIN}/libs`);
  if (!answer || "redirect" in answer) throw new Error(`no local copy of ${rest}`);
  return { [`/libs/cdn/${rest}`]: answer.body };
}

function page(files: Files): Files {
  return {
    "/index.html": html(
      `<div data-composition-id="main" data-width="640" data-height="360" data-duration="1">
         <div data-composition-id="card" data-composition-src="compositions/card.html"
              data-start="0" data-duration="1" data-width="640" data-height="360"></div>
       </div>`,
      '<script src="/gsap.min.js"></script>',
    ),
    "/compositions/card.html": CARD,
    ...files,
  };
}

describe("a preview's library base", () => {
  it("points a sub-composition's CDN URLs at the library, so its font loads offline", async () => {
    const preview = await open(page(await libraryFiles()), { libraryBase: `${ORIGIN}/libs` });
    expect(
      await preview.evaluate(
        () => document.querySelector<HTMLLinkElement>("link[rel=stylesheet]")!.href,
      ),
    ).toBe(`${ORIGIN}/libs/cdn/fonts.googleapis.com/css2?family=Anton&display=block`);
    expect(
      await preview.evaluate(() =>
        [...document.fonts]
          .filter((face) => face.family.replace(/"/g, "") === "Pinned")
          .map((face) => face.status),
      ),
    ).toEqual(["loaded"]);
  });
});
