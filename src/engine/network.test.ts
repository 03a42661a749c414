import { describe, expect, it } from "vitest";
import { cdnResponse, googleFontsCss, networkAllows } from "./network";

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

describe("network access beyond the project", () => {
  it("lets an origin list reach only those origins, by exact origin", () => {
    const access = { origins: ["https://cdn.example.com"] };
    expect(networkAllows(access, "https://cdn.example.com/logo.png")).toBe(true);
    expect(networkAllows(access, "https://cdn.example.com:8443/logo.png")).toBe(false);
    expect(networkAllows(access, "http://cdn.example.com/logo.png")).toBe(false);
    expect(networkAllows(access, "https://cdn.example.com.evil.test/logo.png")).toBe(false);
    expect(networkAllows(access, "http://127.0.0.1:8080/")).toBe(false);
    expect(networkAllows(access, "not a url")).toBe(false);
  });

  it("keeps true and false meaning everything over http(s) and nothing", () => {
    expect(networkAllows(true, "http://169.254.169.254/latest/meta-data")).toBe(true);
    expect(networkAllows(true, "file:///etc/passwd")).toBe(false);
    expect(networkAllows(false, "https://cdn.example.com/logo.png")).toBe(false);
  });
});
