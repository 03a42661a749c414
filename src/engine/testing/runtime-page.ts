// Test support for the page runtime in real Chromium: pages are served from memory through request
// routing, the runtime is installed exactly as the engine installs it, and tests read what the page
// shows (positions, visibility, text) after `__svc.seek(t)`. `usePageBrowser()` registers the
// browser's start and stop with the calling test file.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { launchChromium } from "./launch-chromium";
import { runtimeScript } from "../bundles/runtime-bundle";

export const ORIGIN = "http://svc.test";
/** waitForFunction polls with requestAnimationFrame by default, which is virtual in these pages. */
export const POLL_MS = 20;
export const GSAP = readFileSync(
  createRequire(import.meta.url).resolve("gsap/dist/gsap.min.js"),
  "utf8",
);

/** A file body, or null for a request that never answers. */
export type Files = Record<string, string | Buffer | null>;

let browser: Browser;
let context: BrowserContext | undefined;

/** Starts one browser for the calling test file and closes it after its last test. */
export function usePageBrowser(): void {
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
}

function contentType(path: string): string {
  if (path.endsWith(".html")) return "text/html";
  if (path.endsWith(".js")) return "text/javascript";
  if (path.endsWith(".css")) return "text/css";
  if (path.endsWith(".wav")) return "audio/wav";
  if (path.endsWith(".png")) return "image/png";
  if (path.endsWith(".webm")) return "video/webm";
  return "application/octet-stream";
}

export async function open(
  files: Files,
  options: {
    variables?: Record<string, unknown>;
    epochMs?: number;
    waitReady?: boolean;
    /** As a preview frame's config names it (an absolute URL). */
    libraryBase?: string;
  } = {},
): Promise<Page> {
  await context?.close();
  context = await browser.newContext({ viewport: { width: 640, height: 360 } });
  const served: Files = { "/gsap.min.js": GSAP, ...files };
  await context.route(`${ORIGIN}/**`, async (route) => {
    const path = new URL(route.request().url()).pathname;
    if (!(path in served)) return route.fulfill({ status: 404, body: "not found" });
    const body = served[path];
    if (body === null) return; // never answers
    const range = /^bytes=(\d+)-(\d*)$/.exec(route.request().headers()["range"] ?? "");
    if (range && typeof body !== "string") {
      // Media elements seek only in resources served with HTTP Range, as the project server does.
      const start = Number(range[1]);
      const end = range[2] ? Math.min(Number(range[2]), body!.length - 1) : body!.length - 1;
      return route.fulfill({
        status: 206,
        body: body!.subarray(start, end + 1),
        headers: {
          "content-type": contentType(path),
          "content-range": `bytes ${start}-${end}/${body!.length}`,
          "accept-ranges": "bytes",
        },
      });
    }
    return route.fulfill({ status: 200, body: body!, contentType: contentType(path) });
  });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") pageErrors.push(message.text());
  });
  await page.addInitScript({
    content: await runtimeScript({
      variables: options.variables ?? {},
      ...(options.epochMs !== undefined ? { epochMs: options.epochMs } : {}),
      ...(options.libraryBase ? { libraryBase: options.libraryBase } : {}),
    }),
  });
  await page.goto(`${ORIGIN}/index.html`, { waitUntil: "domcontentloaded" });
  if (options.waitReady !== false) {
    const settled = await page
      .waitForFunction(() => window.__svc?.ready || window.__svc?.error, undefined, {
        timeout: 10_000,
        polling: POLL_MS,
      })
      .then(
        () => "",
        (error: Error) => error.message,
      );
    const state = await page.evaluate(() => ({
      ready: window.__svc?.ready,
      error: window.__svc?.error,
      waitingFor: window.__svc?.waitingFor,
    }));
    if (settled || state.error) {
      throw new Error(
        `page not ready: ${JSON.stringify(state)} ${settled}; page errors: ${pageErrors.join(" | ")}`,
      );
    }
  }
  return page;
}

export async function seek(page: Page, t: number): Promise<void> {
  await page.evaluate((time) => window.__svc!.seek(time), t);
}

/** Horizontal translation of an element, from its computed transform. */
export function translateX(page: Page, selector: string): Promise<number[]> {
  return page.evaluate(
    (sel) =>
      Array.from(document.querySelectorAll(sel)).map((element) => {
        const transform = getComputedStyle(element).transform;
        return transform === "none" ? 0 : new DOMMatrix(transform).m41;
      }),
    selector,
  );
}

export function visibility(page: Page, selector: string): Promise<string[]> {
  return page.evaluate(
    (sel) => Array.from(document.querySelectorAll(sel)).map((e) => getComputedStyle(e).visibility),
    selector,
  );
}

export function html(body: string, head = "", htmlAttrs = ""): string {
  return `<!doctype html><html ${htmlAttrs}><head><meta charset="utf-8">${head}</head><body style="margin:0">${body}</body></html>`;
}

/** A short mono 8 kHz WAV of silence, so media readiness has something real to load. */
export function wav(seconds: number): Buffer {
  const rate = 8000;
  const samples = Math.round(rate * seconds);
  const buffer = Buffer.alloc(44 + samples * 2);
  buffer.write("RIFF", 0);
  buffer.writeUInt32LE(36 + samples * 2, 4);
  buffer.write("WAVEfmt ", 8);
  buffer.writeUInt32LE(16, 16);
  buffer.writeUInt16LE(1, 20);
  buffer.writeUInt16LE(1, 22);
  buffer.writeUInt32LE(rate, 24);
  buffer.writeUInt32LE(rate * 2, 28);
  buffer.writeUInt16LE(2, 32);
  buffer.writeUInt16LE(16, 34);
  buffer.write("data", 36);
  buffer.writeUInt32LE(samples * 2, 40);
  return buffer;
}

/** A small VP8 clip (3 s, 10 fps) made with the FFmpeg that ships with svc. */
export function webm(): Buffer {
  const ffmpeg = (createRequire(import.meta.url)("@ffmpeg-installer/ffmpeg") as { path: string })
    .path;
  const dir = mkdtempSync(join(tmpdir(), "svc-runtime-test-"));
  try {
    const out = join(dir, "clip.webm");
    execFileSync(ffmpeg, [
      ...["-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x36:rate=10:duration=3"],
      ...["-c:v", "libvpx", "-b:v", "200k", "-g", "1", out],
    ]);
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
