import { describe, expect, it } from "vitest";
import { resolveChromium } from "./browser";
import { launchChromium } from "../testing/launch-chromium";

describe("resolveChromium", () => {
  it("names the fix when SVC_CHROMIUM_PATH points nowhere", async () => {
    await expect(resolveChromium({ SVC_CHROMIUM_PATH: "/nowhere/chrome" })).rejects.toMatchObject({
      code: "browser_not_found",
      hint: expect.stringContaining("SVC_CHROMIUM_PATH"),
    });
  });

  it("finds a browser that launches and renders a page", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.setContent("<p id=p>2 + 2</p><script>p.textContent = String(2 + 2)</script>");
      expect(await page.textContent("#p")).toBe("4");
    } finally {
      await browser.close();
    }
  });
});
