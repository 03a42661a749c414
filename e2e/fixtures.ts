// Playwright fixtures: the `browser` is launched from the same Chromium the engine uses
// (SVC_CHROMIUM_PATH, a system Chromium, else the bundled @sparticuz/chromium).
import { test as base, chromium, type Browser } from "@playwright/test";
import { BASE_CHROMIUM_ARGS, resolveChromium } from "../src/engine/browser/browser";

export const test = base.extend<object, { browser: Browser }>({
  browser: [
    // Playwright reads fixture dependencies from the destructuring pattern; this one has none.
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const resolved = await resolveChromium();
      const browser = await chromium.launch({
        executablePath: resolved.executablePath,
        args: BASE_CHROMIUM_ARGS,
        env: { ...process.env, ...resolved.env },
      });
      await use(browser);
      await browser.close();
    },
    { scope: "worker" },
  ],
});

export { expect } from "@playwright/test";
