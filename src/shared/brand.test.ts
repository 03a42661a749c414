import { describe, expect, it } from "vitest";
import {
  BRAND_FONT_MAX_BYTES,
  brandKitSchema,
  brandValues,
  fontDataUrl,
  fontFileName,
  isFontFile,
  usesBrand,
} from "./brand";
import { parseVariablesSchema } from "./variables";

const schema = parseVariablesSchema(
  JSON.stringify([
    { id: "headline", type: "string", default: "Hi" },
    { id: "brand-logo", type: "image", default: "logo.svg" },
    { id: "brand-primary", type: "color", default: "#ff0000" },
    { id: "brand-text", type: "string", default: "not a colour" },
    { id: "brand-font", type: "font", default: "Inter" },
  ]),
).variables;

describe("brandValues", () => {
  it("fills only the brand variables the composition declares, with the expected type", () => {
    const kit = brandKitSchema.parse({
      logo: "data:image/svg+xml;base64,PHN2Zy8+",
      colors: { primary: "#00aa77", secondary: "#111111", text: "#ffffff" },
      fonts: { heading: "Playfair Display", body: "Inter" },
    });
    expect(brandValues(kit, schema)).toEqual({
      "brand-logo": "data:image/svg+xml;base64,PHN2Zy8+",
      "brand-primary": "#00aa77",
      "brand-font": "Playfair Display",
    });
    expect(usesBrand(schema)).toBe(true);
    expect(usesBrand(schema.filter((v) => v.id === "headline"))).toBe(false);
  });

  it("refuses a logo that is not a picture, a colour that is not #rrggbb and a font with quotes", () => {
    const result = brandKitSchema.safeParse({
      logo: "data:text/html;base64,PGgxPg==",
      colors: { primary: "red" },
      fonts: { heading: 'Inter"; color: red' },
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join("."))).toEqual([
      "logo",
      "colors.primary",
      "fonts.heading",
    ]);
  });
});

describe("font files", () => {
  const woff2 = fontDataUrl("Brand Sans (Bold).woff2", "d09GMgABAAA=")!;

  it("carries a font file with its file name, and fills brand-font with it", () => {
    expect(woff2).toBe("data:font/woff2;name=Brand%20Sans%20(Bold).woff2;base64,d09GMgABAAA=");
    expect(isFontFile(woff2)).toBe(true);
    expect(isFontFile("Inter")).toBe(false);
    expect(fontFileName(woff2)).toBe("Brand Sans (Bold).woff2");
    const kit = brandKitSchema.parse({ fonts: { heading: woff2, body: "Inter" } });
    expect(brandValues(kit, schema)).toEqual({ "brand-font": woff2 });
  });

  it("refuses a file that is not a font, and one over the size limit", () => {
    expect(fontDataUrl("notes.txt", "aGk=")).toBeUndefined();
    const big = fontDataUrl(
      "big.ttf",
      "A".repeat(Math.ceil((BRAND_FONT_MAX_BYTES * 4) / 3) + 400),
    )!;
    for (const heading of ["data:text/html;base64,PGgxPg==", big]) {
      const result = brandKitSchema.safeParse({ fonts: { heading } });
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.message).toContain("TTF, OTF, WOFF or WOFF2 file");
    }
  });
});
