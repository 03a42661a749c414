// The browser session a render captures from, with the real Chromium: the network policy holds for
// the page and its workers, and a browser leaves neither a process nor a profile folder behind.
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveChromium } from "./browser";
import { CapturePage } from "./capture";
import { CdpBrowser } from "./cdp";
import { EngineError } from "../errors";
import { decodeFrame, pixelAt } from "../testing/probe";
import { startProjectServer } from "./project-server";

let scratch: string;
let browserTemp: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-capture-test-"));
  // Browsers keep their profile folder under TMPDIR; a private one shows that they clean up.
  browserTemp = join(scratch, "tmp");
  await mkdir(browserTemp);
  process.env.TMPDIR = browserTemp;
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function profileFolders(): Promise<string[]> {
  return (await readdir(browserTemp)).filter((name) => name.startsWith("svc-chromium-"));
}

/** A session on a one-page project, served as a render serves it. */
async function openOn(
  projectDir: string,
  html: string,
  options: Partial<Parameters<typeof CapturePage.open>[0]> = {},
): Promise<{ session: CapturePage; close: () => Promise<void> }> {
  await mkdir(projectDir, { recursive: true });
  await writeFile(join(projectDir, "index.html"), html);
  const server = await startProjectServer(projectDir);
  const session = await CapturePage.open({
    browser: await resolveChromium(),
    viewport: { width: 640, height: 360 },
    deviceScaleFactor: 1,
    transparent: false,
    imageFormat: "jpeg",
    jpegQuality: 90,
    initScript: "",
    projectOrigin: server.origin,
    allowNetwork: false,
    onPageError: () => undefined,
    ...options,
  });
  await session.load(`${server.origin}/index.html`, 30_000);
  return {
    session,
    close: async () => {
      await session.close();
      await server.close();
    },
  };
}

describe("CapturePage", () => {
  it("refuses requests outside the project when the network is off, from every kind of worker too", async () => {
    const requests: string[] = [];
    const outside = createServer((req, res) => {
      requests.push(req.url ?? "");
      res.end("reached");
    });
    await new Promise<void>((done) => outside.listen(0, "127.0.0.1", done));
    const elsewhere = `http://127.0.0.1:${(outside.address() as AddressInfo).port}`;
    const projectDir = join(scratch, "network");
    await mkdir(projectDir);
    // Each kind of script asks for a URL outside the project and reports whether it got through.
    const ask = (from: string) =>
      `fetch("${elsewhere}/from-${from}").then(() => "fetched", () => "refused")`;
    await writeFile(
      join(projectDir, "shared.js"),
      `onconnect = (event) => ${ask("shared")}.then((answer) => event.ports[0].postMessage(answer));`,
    );
    await writeFile(
      join(projectDir, "service.js"),
      `onmessage = (event) => ${ask("service")}.then((answer) => event.source.postMessage(answer));`,
    );
    const blocked: string[] = [];
    const { session, close } = await openOn(
      projectDir,
      `<!doctype html><script src="https://cdn.jsdelivr.net/npm/gsap@3.15.0/dist/gsap.min.js"></script>
<script>
  window.fromPage = ${ask("page")};
  const worker = new Worker(URL.createObjectURL(new Blob(['${ask("worker")}.then(postMessage)'])));
  window.fromWorker = new Promise((resolve) => (worker.onmessage = (event) => resolve(event.data)));
  const shared = new SharedWorker("shared.js");
  window.fromShared = new Promise((resolve) => (shared.port.onmessage = (event) => resolve(event.data)));
  // The closed browser (confinement.ts) cannot even fetch a service worker's own script (the
  // browser loads it outside the page), so it never runs: refused too.
  window.fromService = navigator.serviceWorker.register("service.js")
    .then(() => navigator.serviceWorker.ready)
    .then((registration) => new Promise((resolve) => {
      navigator.serviceWorker.onmessage = (event) => resolve(event.data);
      registration.active.postMessage("ask");
    }), () => "refused");
</script>`,
      { onBlockedRequest: (url) => blocked.push(url) },
    );
    try {
      expect(await session.evaluate("window.fromPage")).toBe("refused");
      expect(await session.evaluate("window.fromWorker")).toBe("refused");
      expect(await session.evaluate("window.fromShared")).toBe("refused");
      expect(await session.evaluate("window.fromService")).toBe("refused");
      // The GSAP CDN address is answered from the local package, network or not.
      expect(await session.evaluate("typeof gsap.timeline")).toBe("function");
      expect(blocked.sort()).toEqual(
        ["page", "shared", "worker"].map((from) => `${elsewhere}/from-${from}`),
      );
      expect(requests).toEqual([]);
    } finally {
      await close();
      outside.close();
    }
    expect(await profileFolders()).toEqual([]);
  });
});

/** The largest step of a JPEG's first quantisation table: 1 only at quality 100. */
function largestQuantStep(jpeg: Buffer): number {
  const at = jpeg.indexOf(Buffer.from([0xff, 0xdb]));
  if (at < 0) throw new Error("no quantisation table in the JPEG");
  // FF DB, 2-byte length, one byte of precision/table id, then 64 steps (8-bit precision).
  return Math.max(...jpeg.subarray(at + 5, at + 5 + 64));
}

describe("CapturePage image quality", () => {
  const grain = `<!doctype html><body style="margin:0"><svg width="640" height="360">
    <filter id="g"><feTurbulence type="fractalNoise" baseFrequency="0.9" seed="3"/></filter>
    <rect width="640" height="360" filter="url(#g)"/></svg>`;
  const plain = `<!doctype html><body style="margin:0;background:linear-gradient(#123,#9ab)">`;

  it("reads a page with SVG turbulence noise back at JPEG 100, and any other page at the tier's quality", async () => {
    for (const [name, html, step] of [
      ["grain", grain, 1],
      ["plain", plain, undefined],
    ] as const) {
      const { session, close } = await openOn(join(scratch, `quality-${name}`), html, {
        jpegQuality: 92,
      });
      try {
        await session.matchPageDetail();
        const largest = largestQuantStep((await session.capture(false)).image);
        if (step === undefined) expect(largest).toBeGreaterThan(1);
        else expect(largest).toBe(step);
      } finally {
        await close();
      }
    }
  });
});

describe("CapturePage by screenshot (browsers without begin-frame control)", () => {
  it("captures what the page shows, and tells a changed frame from a repeat", async () => {
    const { session, close } = await openOn(
      join(scratch, "screenshot"),
      `<!doctype html><body style="margin:0;background:rgb(200,40,40)">`,
      { preferredMethod: "screenshot" },
    );
    try {
      expect(session.method).toBe("screenshot");
      // Every segment starts with it (render-capture.ts): a multi-process browser takes it too.
      await session.forgetRasterHistory();
      const first = await session.capture();
      expect(first.changed).toBe(true);
      expect((await session.capture()).changed).toBe(false);
      await session.evaluate(`document.body.style.background = "rgb(40,40,200)"`);
      const second = await session.capture();
      expect(second.changed).toBe(true);
      const file = join(scratch, "screenshot", "frame.jpg");
      for (const [shot, expected] of [
        [first, [200, 40, 40]],
        [second, [40, 40, 200]],
      ] as const) {
        await writeFile(file, shot.image);
        const frame = await decodeFrame(file, 0);
        expect([frame.width, frame.height]).toEqual([640, 360]);
        const rgb = pixelAt(frame, 320, 180).slice(0, 3);
        rgb.forEach((value, i) => expect(Math.abs(value - expected[i]!)).toBeLessThan(6));
      }
    } finally {
      await close();
    }
    expect(await profileFolders()).toEqual([]);
  });
});

describe("CdpBrowser", () => {
  it("quits the browser on close and removes its profile folder", async () => {
    const resolved = await resolveChromium();
    const browser = await CdpBrowser.launch({
      executablePath: resolved.executablePath,
      args: ["--no-sandbox", "--disable-gpu", "--headless", "--no-startup-window"],
      env: { ...process.env, ...resolved.env },
    });
    expect(await profileFolders()).toHaveLength(1);
    const { product } = await browser.send<{ product: string }>("Browser.getVersion");
    expect(product).toMatch(/Chrom/);
    await browser.close();
    await browser.exited;
    expect(await profileFolders()).toEqual([]);
    await expect(browser.send("Browser.getVersion")).rejects.toBeInstanceOf(EngineError);
  });

  it("says so when the browser quits before it answers, and cleans up", async () => {
    const error = await CdpBrowser.launch({
      executablePath: "/bin/false",
      args: [],
      env: process.env,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).code).toBe("capture_failed");
    expect((error as EngineError).message).toMatch(/quit unexpectedly \(exit code 1\)/);
    expect(await profileFolders()).toEqual([]);
  });

  it("starts the browser again when it crashes before its first answer, once", async () => {
    const resolved = await resolveChromium();
    // A real start-up crash: a launcher that dies by SIGSEGV on its first run(s), then runs Chromium.
    const launcher = async (crashes: number) => {
      const dir = await mkdtemp(join(scratch, "crashing-"));
      const script = join(dir, "chromium");
      await writeFile(
        script,
        `#!/bin/sh\nn=$(ls "${dir}" | grep -c '^crash-')\n` +
          `if [ "$n" -lt ${crashes} ]; then touch "${dir}/crash-$n"; kill -SEGV $$; fi\n` +
          `exec "${resolved.executablePath}" "$@"\n`,
        { mode: 0o755 },
      );
      return { script, dir };
    };
    const launch = (executablePath: string) =>
      CdpBrowser.launch({
        executablePath,
        args: ["--no-sandbox", "--disable-gpu", "--headless", "--no-startup-window"],
        env: { ...process.env, ...resolved.env },
      });

    const once = await launcher(1);
    const browser = await launch(once.script);
    const { product } = await browser.send<{ product: string }>("Browser.getVersion");
    expect(product).toMatch(/Chrom/);
    await browser.close();
    expect((await readdir(once.dir)).filter((name) => name.startsWith("crash-"))).toHaveLength(1);

    const always = await launcher(99);
    const error = await launch(always.script).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).message).toMatch(/quit unexpectedly \(SIGSEGV\)/);
    expect((await readdir(always.dir)).filter((name) => name.startsWith("crash-"))).toHaveLength(2);
    expect(await profileFolders()).toEqual([]);
  });

  it("names a browser path that does not exist", async () => {
    await expect(
      CdpBrowser.launch({ executablePath: join(scratch, "no-chrome"), args: [], env: process.env }),
    ).rejects.toMatchObject({ code: "browser_not_found", hint: expect.stringContaining("doctor") });
    expect(await profileFolders()).toEqual([]);
  });
});
