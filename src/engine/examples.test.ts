// Every example in examples/ loads in Chromium without errors and registers its GSAP timeline.
// The engine runtime is not involved: the folder is served from disk on http://svc.test/, the GSAP
// CDN URL from the local gsap package, and any other network request fails the test (examples
// must render offline). Nested compositions are instantiated the simple way (template content
// inserted into the host, scripts re-created) to check that their scripts run too.
import { existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, join, normalize, resolve } from "node:path";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_CHROMIUM_ARGS, resolveChromium } from "./browser";

const EXAMPLES_DIR = resolve(import.meta.dirname, "../../examples");
const GSAP_CDN_URL = "https://cdn.jsdelivr.net/npm/gsap@3.15.0/dist/gsap.min.js";
const GSAP_FILE = join(dirname(createRequire(import.meta.url).resolve("gsap")), "gsap.min.js");

const EXAMPLES: Array<{ name: string; width: number; height: number; duration: number }> = [
  { name: "hello-world", width: 1920, height: 1080, duration: 5 },
  { name: "lower-third", width: 1920, height: 1080, duration: 4 },
  { name: "alpha-overlay", width: 1920, height: 1080, duration: 3 },
  { name: "with-audio", width: 1920, height: 1080, duration: 4 },
  { name: "multi-scene", width: 1920, height: 1080, duration: 6 },
  { name: "gsap-heavy", width: 1920, height: 1080, duration: 12 },
];

const MIME: Record<string, string> = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".css": "text/css",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".wav": "audio/wav",
  ".json": "application/json",
};

let browser: Browser;

beforeAll(async () => {
  const resolved = await resolveChromium();
  browser = await chromium.launch({
    executablePath: resolved.executablePath,
    args: BASE_CHROMIUM_ARGS,
    env: { ...process.env, ...resolved.env },
  });
});

afterAll(async () => {
  await browser?.close();
});

describe.each(EXAMPLES)("examples/$name", (example) => {
  it("loads without errors and registers its timeline", async () => {
    const root = join(EXAMPLES_DIR, example.name);
    const errors: string[] = [];
    const page = await browser.newPage({ viewport: { width: example.width, height: example.height } });
    try {
      page.on("pageerror", (error) => errors.push(`page error: ${error.message}`));
      page.on("console", (message) => {
        if (message.type() === "error") errors.push(`console error: ${message.text()}`);
      });
      await page.route("**/*", async (route) => {
        const url = new URL(route.request().url());
        if (url.href === GSAP_CDN_URL) {
          await route.fulfill({ path: GSAP_FILE, contentType: "text/javascript" });
          return;
        }
        const file = normalize(join(root, decodeURIComponent(url.pathname)));
        if (url.host !== "svc.test" || !file.startsWith(root)) {
          errors.push(`network request outside the project: ${url.href}`);
          await route.abort();
        } else if (existsSync(file) && statSync(file).isFile()) {
          const contentType = MIME[extname(file)] ?? "application/octet-stream";
          await route.fulfill({ body: readFileSync(file), contentType });
        } else {
          errors.push(`missing file: ${url.pathname}`);
          await route.fulfill({ status: 404, body: "not found" });
        }
      });

      await page.goto("http://svc.test/index.html", { waitUntil: "load" });
      await instantiateNestedCompositions(page);
      const state = await page.evaluate(() => {
        const rootEl = document.querySelector<HTMLElement>("[data-composition-id]");
        const id = rootEl?.dataset.compositionId ?? "";
        const timelines = (window as unknown as { __timelines?: Record<string, unknown> })
          .__timelines;
        const tl = timelines?.[id] as
          | { duration(): number; paused(): boolean; seek(t: number): unknown }
          | undefined;
        const duration = Number(rootEl?.dataset.duration);
        // Seeking through the whole timeline must not throw either.
        for (let t = 0; tl && t <= duration; t += 0.25) tl.seek(t);
        return {
          id,
          width: Number(rootEl?.dataset.width),
          height: Number(rootEl?.dataset.height),
          duration,
          timelineIds: Object.keys(timelines ?? {}),
          timelineDuration: tl?.duration(),
          paused: tl?.paused(),
        };
      });
      expect(errors).toEqual([]);
      expect(state).toMatchObject({
        id: example.name,
        width: example.width,
        height: example.height,
        duration: example.duration,
        paused: true,
      });
      expect(state.timelineIds).toContain(example.name);
      expect(state.timelineDuration).toBeGreaterThan(0);
      expect(state.timelineDuration).toBeLessThanOrEqual(example.duration + 0.001);
    } finally {
      await page.close();
    }
  });
});

/** Inserts each data-composition-src file's <template> content into its host, scripts live. */
async function instantiateNestedCompositions(page: import("playwright-core").Page) {
  await page.evaluate(async () => {
    for (const host of document.querySelectorAll<HTMLElement>("[data-composition-src]")) {
      const html = await (await fetch(`/${host.dataset.compositionSrc}`)).text();
      const template = new DOMParser()
        .parseFromString(html, "text/html")
        .querySelector("template");
      if (!template) throw new Error(`${host.dataset.compositionSrc} has no <template>`);
      host.append(document.importNode(template.content, true));
      for (const old of host.querySelectorAll("script")) {
        const script = document.createElement("script");
        script.textContent = old.textContent;
        old.replaceWith(script);
      }
      const id = host.dataset.compositionId ?? "";
      const timelines = (window as unknown as { __timelines?: Record<string, unknown> })
        .__timelines;
      if (!timelines?.[id]) throw new Error(`nested composition ${id} registered no timeline`);
    }
  });
}
