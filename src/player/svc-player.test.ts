// <svc-player> in a real Chromium: it seeks to the exact frame the engine renders, fires its
// events, plays, and applies new variables live. The page and the composition are served by a
// loopback server with CORS, as the desktop app and the template serve them. A second page runs
// the player with `frame="served"` against the desktop app's preview server (its own origin),
// under a strict CSP like the app's, and must show the very same frames.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../engine/testing/launch-chromium";
import { playerModule } from "../engine/bundles/player-bundle";
import { decodeFrame, pixelAt } from "../engine/testing/probe";
import { renderComposition } from "../engine/render";
import { PreviewServers } from "../main/preview-server";

/** Grey level 250 * t / 2 over 2 s (CSS animation); `bg` variable paints the right half. */
const COMPOSITION = `<!doctype html><html data-composition-variables='[{"id":"bg","type":"color","label":"Right half","default":"#ff0000"}]'>
<head><style>html,body{margin:0}#ramp{position:absolute;left:0;top:0;width:960px;height:1080px;animation:ramp 2s linear both}
#right{position:absolute;left:960px;top:0;width:960px;height:1080px;background:var(--bg)}
@keyframes ramp{from{background:rgb(0,0,0)}to{background:rgb(250,250,250)}}</style></head>
<body><div data-composition-id="main" data-width="1920" data-height="1080" data-duration="2"
 style="position:relative;width:1920px;height:1080px"><div id="ramp"></div><div id="right"></div></div></body></html>`;

const PAGE = `<!doctype html><html><body style="margin:0;background:#fff">
<svc-player id="player" src="/comp/index.html" width="480" controls fps="10"></svc-player>
<script type="module">
  import "/svc-player.js";
  const player = document.getElementById("player");
  window.events = [];
  for (const type of ["ready", "play", "pause", "timeupdate", "ended", "error"]) {
    player.addEventListener(type, () => window.events.push(type));
  }
</script></body></html>`;

/** The served-mode page: a strict CSP (no inline script or style) and the player module only. */
function servedPage(src: string, missing: string): string {
  return `<!doctype html><html><head><meta http-equiv="Content-Security-Policy"
 content="default-src 'self'; script-src 'self'; style-src 'self'; frame-src http://127.0.0.1:*"></head>
<body>
<svc-player id="player" frame="served" src="${src}" width="480" controls fps="10"></svc-player>
<svc-player id="missing" frame="served" src="${missing}" width="160"></svc-player>
<script type="module" src="/served.js"></script></body></html>`;
}

const SERVED_SCRIPT = `import "/svc-player.js";
Object.assign(document.body.style, { margin: "0", background: "#fff" });
window.events = [];
window.missingErrors = [];
const player = document.getElementById("player");
for (const type of ["ready", "timeupdate", "error"]) {
  player.addEventListener(type, () => window.events.push(type));
}
document.getElementById("missing").addEventListener("error", (event) =>
  window.missingErrors.push(event.detail.message));`;

let server: Server;
let origin: string;
let browser: Browser;
let page: Page;
let scratch: string;
let previews: PreviewServers;
let previewUrl: string;
let rendered: Promise<string> | undefined;

/** The engine's render of the composition at 10 fps (made once, on first use). */
function engineVideo(): Promise<string> {
  rendered ??= renderComposition({
    projectDir: scratch,
    output: join(scratch, "out.mp4"),
    fps: 10,
    allowNetwork: false,
  }).then((result) => result.outputPath);
  return rendered;
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-player-"));
  await writeFile(join(scratch, "index.html"), COMPOSITION);
  const player = await playerModule();
  previews = new PreviewServers();
  previewUrl = await previews.urlFor(scratch, "index.html");
  server = createServer((req, res) => {
    const headers = { "access-control-allow-origin": "*" };
    if (req.url === "/") res.writeHead(200, { ...headers, "content-type": "text/html" }).end(PAGE);
    else if (req.url === "/served")
      res
        .writeHead(200, { "content-type": "text/html" })
        .end(servedPage(previewUrl, new URL("/missing.html", previewUrl).href));
    else if (req.url === "/served.js")
      res.writeHead(200, { "content-type": "text/javascript" }).end(SERVED_SCRIPT);
    else if (req.url === "/svc-player.js")
      res.writeHead(200, { ...headers, "content-type": "text/javascript" }).end(player);
    else if (req.url === "/comp/index.html")
      res.writeHead(200, { ...headers, "content-type": "text/html" }).end(COMPOSITION);
    else res.writeHead(404, headers).end();
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 800, height: 600 } });
  await page.goto(origin);
  await page.waitForFunction(() =>
    (window as unknown as { events: string[] }).events.includes("ready"),
  );
});

afterAll(async () => {
  await browser?.close();
  server?.close();
  await previews?.close();
  await rm(scratch, { recursive: true, force: true });
});

/** RGBA of the player's stage at a point given in composition pixels. */
async function stagePixel(
  x: number,
  y: number,
  on: Page = page,
): Promise<[number, number, number, number]> {
  const box = (await on.locator("#player").boundingBox())!;
  const scale = box.width / 1920;
  const png = await on.screenshot({
    clip: { x: box.x + x * scale, y: box.y + y * scale, width: 1, height: 1 },
  });
  const file = join(scratch, `pixel-${Date.now()}.png`);
  await writeFile(file, png);
  return pixelAt(await decodeFrame(file, 0), 0, 0);
}

describe("<svc-player>", () => {
  it("reports the composition's duration once ready", async () => {
    expect(
      await page.evaluate(
        () => (document.getElementById("player") as unknown as { duration: number }).duration,
      ),
    ).toBe(2);
  });

  it("sizes itself from width, from height, or fits a width x height box", async () => {
    const sizes = await page.evaluate(async () => {
      const measure = async (attributes: Record<string, string>) => {
        const player = document.createElement("svc-player");
        for (const [name, value] of Object.entries(attributes)) player.setAttribute(name, value);
        document.body.append(player);
        await new Promise<void>((done) => player.addEventListener("ready", () => done()));
        const stage = player.shadowRoot!.querySelector(".stage")!.getBoundingClientRect();
        const frame = player.shadowRoot!.querySelector("iframe")!.getBoundingClientRect();
        player.remove();
        return [stage.width, stage.height, frame.width, frame.height, frame.x - stage.x];
      };
      return {
        width: await measure({ src: "/comp/index.html", width: "480" }),
        height: await measure({ src: "/comp/index.html", height: "180" }),
        box: await measure({ src: "/comp/index.html", width: "600", height: "180" }),
      };
    });
    expect(sizes.width).toEqual([480, 270, 480, 270, 0]);
    expect(sizes.height).toEqual([320, 180, 320, 180, 0]);
    // 320x180 picture centred in a 600x180 box.
    expect(sizes.box).toEqual([600, 180, 320, 180, 140]);
  });

  it("seeks to the frame the engine renders at that time", async () => {
    const video = await engineVideo();
    for (const frame of [4, 13]) {
      await page.evaluate(
        (t) =>
          (document.getElementById("player") as unknown as { seek(t: number): Promise<void> }).seek(
            t,
          ),
        frame / 10,
      );
      const [previewed] = await stagePixel(480, 540);
      const [engine] = pixelAt(await decodeFrame(video, frame), 480, 540);
      expect(Math.abs(previewed - (250 * frame) / 20)).toBeLessThanOrEqual(3);
      expect(Math.abs(previewed - engine)).toBeLessThanOrEqual(4);
    }
  });

  it("plays: currentTime advances and play/timeupdate/pause fire", async () => {
    await page.evaluate(async () => {
      const player = document.getElementById("player") as unknown as {
        seek(t: number): Promise<void>;
        play(): void;
      };
      await player.seek(0);
      (window as unknown as { events: string[] }).events.length = 0;
      player.play();
    });
    await page.waitForFunction(
      () =>
        (document.getElementById("player") as unknown as { currentTime: number }).currentTime > 0.5,
    );
    await page.evaluate(() =>
      (document.getElementById("player") as unknown as { pause(): void }).pause(),
    );
    const events = await page.evaluate(() => (window as unknown as { events: string[] }).events);
    expect(events[0]).toBe("play");
    expect(events).toContain("timeupdate");
    // A frame requested before the pause may still land (and say so) after it.
    expect(events.indexOf("pause")).toBeGreaterThan(events.indexOf("timeupdate"));
  });

  it("steps one frame with the arrow keys", async () => {
    await page.evaluate(() =>
      (document.getElementById("player") as unknown as { seek(t: number): Promise<void> }).seek(1),
    );
    await page.locator("#player").focus();
    await page.keyboard.press("ArrowRight");
    await page.waitForFunction(
      () =>
        Math.abs(
          (document.getElementById("player") as unknown as { currentTime: number }).currentTime -
            1.1,
        ) < 1e-9,
    );
  });

  it("applies new variables live and keeps the time", async () => {
    expect((await stagePixel(1440, 540)).slice(0, 3)).toEqual([255, 0, 0]);
    await page.evaluate(() => {
      (window as unknown as { events: string[] }).events.length = 0;
      (document.getElementById("player") as unknown as { variables: object }).variables = {
        bg: "#00ff00",
      };
    });
    await page.waitForFunction(() =>
      (window as unknown as { events: string[] }).events.includes("ready"),
    );
    expect((await stagePixel(1440, 540)).slice(0, 3)).toEqual([0, 255, 0]);
    expect(
      await page.evaluate(
        () => (document.getElementById("player") as unknown as { currentTime: number }).currentTime,
      ),
    ).toBeCloseTo(1.1, 6);
  });
});

describe('<svc-player frame="served">', () => {
  let served: Page;
  const events = () => served.evaluate(() => (window as unknown as { events: string[] }).events);

  beforeAll(async () => {
    served = await browser.newPage({ viewport: { width: 800, height: 600 } });
    const violations: string[] = [];
    served.on("console", (message) => {
      if (message.text().includes("Content Security Policy")) violations.push(message.text());
    });
    await served.goto(`${origin}/served`);
    await served.waitForFunction(() =>
      (window as unknown as { events: string[] }).events.includes("ready"),
    );
    expect(violations).toEqual([]);
  });

  afterAll(async () => {
    await served?.close();
  });

  it("loads the composition from the preview server in a sandboxed frame of its own", async () => {
    const frame = served.locator("#player").locator("iframe");
    expect(await frame.getAttribute("sandbox")).toBe("allow-scripts");
    expect(await frame.getAttribute("srcdoc")).toBeNull();
    const src = new URL((await frame.getAttribute("src"))!);
    expect(src.origin).toBe(new URL(previewUrl).origin);
    expect(src.searchParams.get("svc-frame")).toBe("1");
    expect(
      await served.evaluate(
        () => (document.getElementById("player") as unknown as { duration: number }).duration,
      ),
    ).toBe(2);
  });

  it("seeks to the same frame as the srcdoc player and the engine", async () => {
    const video = await engineVideo();
    for (const frame of [4, 13]) {
      for (const on of [page, served])
        await on.evaluate(
          (t) =>
            (
              document.getElementById("player") as unknown as { seek(t: number): Promise<void> }
            ).seek(t),
          frame / 10,
        );
      const [previewed] = await stagePixel(480, 540, served);
      const [srcdoc] = await stagePixel(480, 540, page);
      const [engine] = pixelAt(await decodeFrame(video, frame), 480, 540);
      expect(previewed).toBe(srcdoc);
      expect(Math.abs(previewed - engine)).toBeLessThanOrEqual(4);
    }
  });

  it("applies new variables live from the preview server and keeps the time", async () => {
    await served.evaluate(() =>
      (document.getElementById("player") as unknown as { seek(t: number): Promise<void> }).seek(
        0.7,
      ),
    );
    expect((await stagePixel(1440, 540, served)).slice(0, 3)).toEqual([255, 0, 0]);
    await served.evaluate(() => {
      (window as unknown as { events: string[] }).events.length = 0;
      (document.getElementById("player") as unknown as { variables: object }).variables = {
        bg: "#0000ff",
      };
    });
    await served.waitForFunction(() =>
      (window as unknown as { events: string[] }).events.includes("ready"),
    );
    expect((await stagePixel(1440, 540, served)).slice(0, 3)).toEqual([0, 0, 255]);
    expect(
      await served.evaluate(
        () => (document.getElementById("player") as unknown as { currentTime: number }).currentTime,
      ),
    ).toBeCloseTo(0.7, 6);
    expect(await events()).not.toContain("error");
  });

  it("says so when the served frame is not a composition frame", async () => {
    await served.waitForFunction(
      () => (window as unknown as { missingErrors: string[] }).missingErrors.length > 0,
    );
    expect(
      await served.evaluate(() => (window as unknown as { missingErrors: string[] }).missingErrors),
    ).toEqual([expect.stringContaining("did not load as a preview frame")]);
  });
});
