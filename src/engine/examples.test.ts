// Every example in examples/ loads in Chromium without errors and registers its GSAP timeline,
// and the pixel regions their READMEs promise hold. The engine runtime is not involved: the folder
// is served from disk on http://svc.test/, the GSAP CDN URL from the local gsap package, and any
// other network request fails the test (examples must render offline). Nested compositions are
// instantiated the simple way (template content inserted into the host) to run their scripts too.
import { existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, join, normalize, resolve } from "node:path";

import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./testing/launch-chromium";

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
  { name: "adaptive", width: 1920, height: 1080, duration: 3 },
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

type Timeline = { duration(): number; paused(): boolean; seek(t: number): unknown };
type Window_ = { __timelines?: Record<string, Timeline> };

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

/** Opens examples/<name>/index.html; `errors` collects page errors and stray requests. */
async function openExample(
  name: string,
  viewport = { width: 1920, height: 1080 },
): Promise<{ page: Page; errors: string[] }> {
  const root = join(EXAMPLES_DIR, name);
  const errors: string[] = [];
  const page = await browser.newPage({ viewport });
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
  return { page, errors };
}

/** Inserts each data-composition-src file's <template> content into its host. */
async function instantiateNestedCompositions(page: Page) {
  await page.evaluate(async () => {
    for (const host of document.querySelectorAll<HTMLElement>("[data-composition-src]")) {
      const html = await (await fetch(`/${host.dataset.compositionSrc}`)).text();
      const template = new DOMParser().parseFromString(html, "text/html").querySelector("template");
      if (!template) throw new Error(`${host.dataset.compositionSrc} has no <template>`);
      // Scripts are swapped for fresh ones before insertion so each runs exactly once.
      const content = document.importNode(template.content, true);
      for (const old of content.querySelectorAll("script")) {
        const script = document.createElement("script");
        script.textContent = old.textContent;
        old.replaceWith(script);
      }
      host.append(content);
      const id = host.dataset.compositionId ?? "";
      if (!(window as Window_).__timelines?.[id]) {
        throw new Error(`nested composition ${id} registered no timeline`);
      }
    }
  });
}

/** Seeks the root timeline to `t` and returns the lowest and highest RGBA seen in a region. */
async function sampleRegion(
  page: Page,
  t: number,
  region: { x0: number; y0: number; x1: number; y1: number },
): Promise<{ min: number[]; max: number[] }> {
  await page.evaluate((time) => {
    const id = document.querySelector<HTMLElement>("[data-composition-id]")?.dataset.compositionId;
    (window as Window_).__timelines?.[id ?? ""]?.seek(time);
  }, t);
  const png = await page.screenshot({ omitBackground: true });
  return page.evaluate(
    async ({ base64, r }) => {
      const image = new Image();
      image.src = `data:image/png;base64,${base64}`;
      await image.decode();
      const canvas = document.createElement("canvas");
      canvas.width = image.width;
      canvas.height = image.height;
      const context = canvas.getContext("2d");
      if (!context) throw new Error("no 2d context");
      context.drawImage(image, 0, 0);
      const data = context.getImageData(r.x0, r.y0, r.x1 - r.x0, r.y1 - r.y0).data;
      const min = [255, 255, 255, 255];
      const max = [0, 0, 0, 0];
      for (let i = 0; i < data.length; i += 4) {
        for (let c = 0; c < 4; c++) {
          min[c] = Math.min(min[c] ?? 255, data[i + c] ?? 0);
          max[c] = Math.max(max[c] ?? 0, data[i + c] ?? 0);
        }
      }
      return { min, max };
    },
    { base64: png.toString("base64"), r: region },
  );
}

describe.each(EXAMPLES)("examples/$name", (example) => {
  it("loads without errors and registers its timeline", async () => {
    const { page, errors } = await openExample(example.name);
    try {
      const state = await page.evaluate(() => {
        const rootEl = document.querySelector<HTMLElement>("[data-composition-id]");
        const id = rootEl?.dataset.compositionId ?? "";
        const timelines = (window as Window_).__timelines;
        const tl = timelines?.[id];
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

describe("documented pixel regions", () => {
  it("lower-third paints x 100..500, y 900..1000 with the accent colour for the whole video", async () => {
    const { page } = await openExample("lower-third");
    try {
      const bar = { x0: 100, y0: 900, x1: 500, y1: 1000 };
      for (const t of [0, 2, 4]) {
        expect(await sampleRegion(page, t, bar)).toEqual({
          min: [0xff, 0x33, 0x66, 255],
          max: [0xff, 0x33, 0x66, 255],
        });
      }
      // The runtime sets --accent on the root; the bar follows it.
      await page.evaluate(() =>
        document.getElementById("stage")?.style.setProperty("--accent", "#22aa44"),
      );
      expect(await sampleRegion(page, 1, bar)).toEqual({
        min: [0x22, 0xaa, 0x44, 255],
        max: [0x22, 0xaa, 0x44, 255],
      });
    } finally {
      await page.close();
    }
  });

  it("alpha-overlay keeps the top-left 200x200 transparent and the cover corner opaque", async () => {
    const { page } = await openExample("alpha-overlay");
    try {
      for (const t of [0, 1, 2, 3]) {
        const corner = await sampleRegion(page, t, { x0: 0, y0: 0, x1: 200, y1: 200 });
        expect(corner.max[3]).toBe(0);
      }
      for (const t of [1, 3]) {
        expect(await sampleRegion(page, t, { x0: 1160, y0: 812, x1: 1200, y1: 836 })).toEqual({
          min: [0xff, 0x33, 0x66, 255],
          max: [0xff, 0x33, 0x66, 255],
        });
      }
    } finally {
      await page.close();
    }
  });
});

describe("examples/adaptive at every aspect ratio", () => {
  // What svc sets on <html> and the root for an output of that ratio (docs/composition-format.md).
  const SIZES = [
    { ratio: "16:9", width: 1920, height: 1080 },
    { ratio: "9:16", width: 1080, height: 1920 },
    { ratio: "1:1", width: 1080, height: 1080 },
  ] as const;

  it.each(SIZES)(
    "$ratio: the text and frames lie inside the picture, the $ratio frame filled",
    async ({ ratio, width, height }) => {
      const { page, errors } = await openExample("adaptive", { width, height });
      try {
        const layout = await page.evaluate((aspect) => {
          document.documentElement.dataset.aspectRatio = aspect;
          document.getElementById("stage")!.dataset.aspectRatio = aspect;
          // The end of the video: everything has risen in.
          (window as Window_).__timelines?.adaptive?.seek(2.9);
          const boxes = [".eyebrow", "h1 .line", ".subtitle", ".frame"].flatMap((selector) =>
            [...document.querySelectorAll(selector)].map((element) => {
              const box = element.getBoundingClientRect();
              const text = element as HTMLElement;
              return {
                selector,
                left: box.left,
                top: box.top,
                right: box.right,
                bottom: box.bottom,
                // Text wider than its box spills out of it (nowrap lines).
                overflows: text.scrollWidth > text.clientWidth + 1,
              };
            }),
          );
          const filled = [...document.querySelectorAll<HTMLElement>(".frame")]
            .filter((frame) => getComputedStyle(frame).backgroundImage !== "none")
            .map((frame) => frame.textContent);
          return { boxes, filled };
        }, ratio);
        expect(errors).toEqual([]);
        expect(layout.boxes).toHaveLength(7);
        for (const box of layout.boxes) {
          expect(box, `${box.selector} at ${ratio}`).toMatchObject({ overflows: false });
          expect(box.left, `${box.selector} at ${ratio}`).toBeGreaterThanOrEqual(60);
          expect(box.top, `${box.selector} at ${ratio}`).toBeGreaterThanOrEqual(60);
          expect(box.right, `${box.selector} at ${ratio}`).toBeLessThanOrEqual(width - 60);
          expect(box.bottom, `${box.selector} at ${ratio}`).toBeLessThanOrEqual(height - 60);
        }
        expect(layout.filled).toEqual([ratio]);
      } finally {
        await page.close();
      }
    },
  );
});
