// Every starter template of gallery/ (src/core/gallery.ts) is a video a creator can publish as it
// comes: `svc check` finds nothing in it, and in each size its card lists, laid out by the page
// runtime exactly as a render lays it out (data-aspect-ratio, the size's viewport), no line of
// text leaves the frame or is clipped by a box around it at the moment its poster shows (when
// every text is in), both with the template's own words and with every text variable filled to
// the most characters it allows (its `maxLength`, which each one declares: the form refuses more).
// One browser for the whole file; pages are laid out, never captured.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listStarterTemplates } from "../core/gallery";
import { contentTypeFor } from "../shared/content-types";
import { scanCompositionHtml } from "../shared/composition-scan";
import { parseVariablesSchema, type VariableDefinition } from "../shared/variables";
import { checkComposition } from "./inspect/check";
import { closeWarmPages } from "./stages/page-pool";
import { runtimeScript } from "./bundles/runtime-bundle";
import { launchChromium } from "./testing/launch-chromium";

const { templates, errors } = await listStarterTemplates();
const GSAP_URL = "https://cdn.jsdelivr.net/npm/gsap@3.15.0/dist/gsap.min.js";
const GSAP_FILE = createRequire(import.meta.url).resolve("gsap/dist/gsap.min.js");
const ORIGIN = "http://gallery.test";
const VIEWPORTS = {
  "16:9": { width: 1920, height: 1080 },
  "9:16": { width: 1080, height: 1920 },
  "1:1": { width: 1080, height: 1080 },
} as const;

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await closeWarmPages();
});

/** English words of ordinary width, cut to the length asked for (never ending in a space). */
const LONG_WORDS =
  "Bring your whole team to the brightest summer market in town with music, food and friends " +
  "from every corner of the city, open late all weekend long for everyone who loves good things";
function longText(length: number): string {
  let text = LONG_WORDS;
  while (text.length < length) text += ` ${LONG_WORDS}`;
  return text.slice(0, length).replace(/ $/, "s");
}

async function textVariables(dir: string): Promise<VariableDefinition[]> {
  const scanned = scanCompositionHtml(await readFile(join(dir, "index.html"), "utf8"));
  if (!scanned.ok) throw new Error(`${dir}: the composition cannot be read`);
  return parseVariablesSchema(scanned.scan.variablesJson).variables.filter(
    (definition) => definition.type === "string",
  );
}

interface CutText {
  text: string;
  box: { left: number; top: number; right: number; bottom: number };
  cutBy: string;
}

it("has at least 12 templates, every card readable", () => {
  expect(errors).toEqual([]);
  expect(templates.length).toBeGreaterThanOrEqual(12);
});

describe.each(templates)("$name", (template) => {
  it("passes svc check with no finding", async () => {
    const findings = await checkComposition(template.dir, { allowNetwork: false });
    expect(findings).toEqual([]);
  });

  it("gives every text variable a maximum length", async () => {
    const unbounded = (await textVariables(template.dir)).filter(
      (definition) => definition.maxLength === undefined,
    );
    expect(unbounded.map((definition) => definition.id)).toEqual([]);
  });

  const cases = template.sizes.flatMap((ratio) => [
    { ratio, words: "its own words" as const },
    { ratio, words: "the longest text allowed" as const },
  ]);
  it.each(cases)(
    "keeps every line of text inside the frame at $ratio with $words",
    async ({ ratio, words }) => {
      const viewport = VIEWPORTS[ratio];
      const variables: Record<string, string> = {};
      if (words === "the longest text allowed") {
        for (const definition of await textVariables(template.dir)) {
          variables[definition.id] = longText(definition.maxLength ?? 200);
        }
      }
      const context = await browser.newContext({ viewport });
      try {
        await context.route(GSAP_URL, async (route) =>
          route.fulfill({ body: await readFile(GSAP_FILE), contentType: "text/javascript" }),
        );
        await context.route(`${ORIGIN}/**`, async (route) => {
          const path = decodeURIComponent(new URL(route.request().url()).pathname);
          const file = join(template.dir, path);
          if (relative(template.dir, file).startsWith("..")) return route.abort();
          const body = await readFile(file).catch(() => undefined);
          if (!body) return route.fulfill({ status: 404 });
          return route.fulfill({ body, contentType: contentTypeFor(file) });
        });
        const page = await context.newPage();
        await page.addInitScript({
          content: await runtimeScript({ variables, aspect: { ratio, ...viewport } }),
        });
        await page.goto(`${ORIGIN}/index.html`);
        await page.waitForFunction(() => window.__svc?.ready || window.__svc?.error, undefined, {
          timeout: 30_000,
          polling: 50,
        });
        expect(await page.evaluate(() => window.__svc?.error ?? null)).toBeNull();
        await page.evaluate((time) => window.__svc!.seek(time), template.posterTime);
        const cut = await page.evaluate(findCutText);
        expect(cut, `text cut off in ${template.name} at ${ratio} with ${words}`).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );
});

/** In the page: every visible text's line boxes that leave the frame or a clipping box. */
function findCutText(): CutText[] {
  const frame = { left: 0, top: 0, right: innerWidth, bottom: innerHeight };
  const found: CutText[] = [];
  const shown = (element: Element): boolean => {
    for (let node: Element | null = element; node; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (
        style.display === "none" ||
        style.visibility === "hidden" ||
        Number(style.opacity) < 0.05
      ) {
        return false;
      }
    }
    return true;
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent?.trim() ?? "";
    const parent = node.parentElement;
    if (!text || !parent || parent.closest("script, style") || !shown(parent)) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const clips: { box: typeof frame; name: string }[] = [{ box: frame, name: "the frame" }];
    for (let box = parent; box && box !== document.body; box = box.parentElement!) {
      const style = getComputedStyle(box);
      if (style.overflowX !== "visible" || style.overflowY !== "visible") {
        const r = box.getBoundingClientRect();
        const name = `${box.tagName.toLowerCase()}${box.id ? `#${box.id}` : ""}.${box.className}`;
        clips.push({ box: { left: r.left, top: r.top, right: r.right, bottom: r.bottom }, name });
      }
    }
    for (const rect of Array.from(range.getClientRects())) {
      if (rect.width === 0 || rect.height === 0) continue;
      for (const clip of clips) {
        const out =
          rect.left < clip.box.left - 1 ||
          rect.top < clip.box.top - 1 ||
          rect.right > clip.box.right + 1 ||
          rect.bottom > clip.box.bottom + 1;
        if (out) {
          found.push({
            text,
            box: { left: rect.left, top: rect.top, right: rect.right, bottom: rect.bottom },
            cutBy: clip.name,
          });
          break;
        }
      }
    }
  }
  return found;
}
