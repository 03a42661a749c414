import { describe, expect, it } from "vitest";
import { cdnResponse, googleFontsCss, libraryResponse } from "./cdn-files";

describe("CDN URLs answered from npm packages", () => {
  it("builds a Google Fonts stylesheet from @fontsource with the asked family name and display", () => {
    const result = googleFontsCss(
      "https://fonts.googleapis.com/css2?family=Inter:wght@400;700&display=block",
    );
    expect(result).toBeDefined();
    expect(result!.css).toContain("font-family: 'Inter'");
    expect(result!.css).toContain("font-display: block");
    expect(result!.css).toMatch(/font-weight: 700;/);
    expect(result!.css).toContain("url(https://cdn.jsdelivr.net/npm/@fontsource/inter@");
    expect(result!.css).not.toContain("./files/");
  });

  it("names a variable package's faces by the Google family, not fontsource's 'X Variable'", () => {
    const result = googleFontsCss(
      "https://fonts.googleapis.com/css2?family=Roboto+Flex:opsz,wdth,wght@8..144,25..151,100..1000",
    );
    expect(result!.css).toContain("font-family: 'Roboto Flex'");
    expect(result!.css).not.toContain("Variable'");
  });

  it("answers the font files the stylesheet points at, and leaves unknown families to the network", async () => {
    const { fonts } = googleFontsCss("https://fonts.googleapis.com/css2?family=Anton")!;
    const file = await cdnResponse(
      `https://cdn.jsdelivr.net/npm/${fonts[0]!.packageName}@5/${fonts[0]!.path}`,
    );
    expect(file?.contentType).toMatch(/^font\//);
    expect(
      await cdnResponse("https://fonts.googleapis.com/css2?family=No+Such+Family"),
    ).toBeUndefined();
    expect(
      await cdnResponse("https://cdn.jsdelivr.net/npm/no-such-package@1/x.js"),
    ).toBeUndefined();
  });
});

describe("library answers for previews", () => {
  it("answers a Google Fonts stylesheet with its font files under the library base", async () => {
    const css = await libraryResponse(
      "fonts.googleapis.com/css2?family=Inter:wght@400;700&display=block",
      "/__svc/libs",
    );
    expect(css && "body" in css ? css.contentType : css).toBe("text/css; charset=utf-8");
    const text = (css as { body: Buffer }).body.toString();
    expect(text).toContain("font-family: 'Inter'");
    expect(text).toContain("url(/__svc/libs/cdn/cdn.jsdelivr.net/npm/@fontsource/inter@");
    expect(text).not.toMatch(/url\(https?:/);
    const font = /url\(\/__svc\/libs\/cdn\/([^)]+)\)/.exec(text)![1]!;
    const file = await libraryResponse(font, "/__svc/libs");
    expect(file && "body" in file ? file.contentType : file).toMatch(/^font\/woff2/);
  });

  it("answers GSAP and npm files from the local packages", async () => {
    const gsap = await libraryResponse(
      "cdn.jsdelivr.net/npm/gsap@3.12.5/dist/gsap.min.js",
      "/libs",
    );
    expect((gsap as { body: Buffer }).body.toString()).toContain("GSAP");
  });

  it("sends a CDN file svc has no copy of to the CDN, and refuses what is no CDN file", async () => {
    expect(await libraryResponse("unpkg.com/no-such-package@1/x.js", "/libs")).toEqual({
      redirect: "https://unpkg.com/no-such-package@1/x.js",
    });
    expect(await libraryResponse("fonts.googleapis.com/css2?family=No+Such+Family", "/l")).toEqual({
      redirect: "https://fonts.googleapis.com/css2?family=No+Such+Family",
    });
    for (const rest of [
      "example.com/x.js",
      "127.0.0.1:8080/admin",
      "cdn.jsdelivr.net/npm/gsap@3/../../../etc/passwd",
      "",
    ]) {
      expect(await libraryResponse(rest, "/libs"), rest).toBeUndefined();
    }
  });
});
