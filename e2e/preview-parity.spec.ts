// Preview equals render, on compositions nobody here wrote: for compositions of the compatibility
// corpus (bench/compat, catalog blocks of the reference renderer), <svc-player> in real Chromium is
// seeked to a time and its picture is compared with the frame svc renders for that time (SSIM, both
// at full size). The player and the engine run the same page runtime, so a difference here means a
// preview that lies to the creator. Well-known CDN URLs (GSAP, npm files, Google Fonts) are answered
// from svc's local copies for the preview as the engine answers them for the render; nothing leaves
// the machine. The worst pair of each composition is kept in e2e/screenshots/parity-<name>.png.
import { execFile } from "node:child_process";
import { readFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { resolveFfmpeg } from "../src/engine/ffmpeg";
import { resolveInsideRoot } from "../src/node/static-files";
import { cdnResponse } from "../src/engine/network";
import { playerModule } from "../src/engine/player-bundle";
import { renderComposition } from "../src/engine/render";
import { contentTypeFor } from "../src/shared/content-types";
import { expect, test } from "./fixtures";
import { REPO } from "./template-app";

const execFileAsync = promisify(execFile);
const PROJECTS = join(REPO, "bench", "compat", "projects");
const SHOTS = join(REPO, "e2e", "screenshots");
const FPS = 10;
const SSIM_BAR = 0.98;

/** Five corpus compositions, three times each (seconds, on the 1/10 s frame grid). */
const CASES: { name: string; times: number[] }[] = [
  { name: "code-morph", times: [0.5, 2.5, 5] },
  { name: "count-up", times: [0.3, 1.2, 2.5] },
  { name: "lower-third-bild", times: [0.5, 1.5, 3] },
  { name: "mk-line-graph", times: [0.5, 2, 4] },
  { name: "macos-notification", times: [0.5, 1.5, 3] },
];

test.describe.configure({ mode: "serial" });

let server: Server;
let origin: string;
let scratch: string;

const HOST_PAGE = `<!doctype html><html><head><meta charset="utf-8">
<style>html,body{margin:0;background:#000}</style>
<script type="module" src="/svc-player.js"></script></head>
<body><svc-player id="player" width="1920"></svc-player></body></html>`;

test.beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-parity-"));
  await mkdir(SHOTS, { recursive: true });
  const player = await playerModule();
  server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      if (path === "/") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(HOST_PAGE);
        return;
      }
      if (path === "/svc-player.js") {
        res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(player);
        return;
      }
      // The srcdoc frame has an opaque origin: its fetches of project files are cross-origin.
      const file = path.startsWith("/p/") ? await resolveInsideRoot(PROJECTS, path.slice(2)) : "";
      const body = file ? await readFile(file).catch(() => undefined) : undefined;
      if (!body) {
        res.writeHead(404, { "access-control-allow-origin": "*" }).end();
        return;
      }
      res
        .writeHead(200, {
          "content-type": contentTypeFor(file!),
          "access-control-allow-origin": "*",
        })
        .end(body);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await rm(scratch, { recursive: true, force: true });
});

/** FFmpeg's SSIM of two same-sized pictures. */
async function ssim(a: string, b: string): Promise<number> {
  const ffmpeg = await resolveFfmpeg();
  const { stderr } = await execFileAsync(ffmpeg.path, [
    ...["-hide_banner", "-i", a, "-i", b, "-lavfi", "ssim", "-f", "null", "-"],
  ]);
  const match = /All:([\d.]+)/.exec(stderr);
  if (!match) throw new Error(`no SSIM in FFmpeg's output: ${stderr}`);
  return Number(match[1]);
}

async function extractFrame(video: string, index: number, png: string): Promise<void> {
  const ffmpeg = await resolveFfmpeg();
  await execFileAsync(ffmpeg.path, [
    ...["-v", "error", "-i", video, "-vf", `select=eq(n\\,${index})`, "-frames:v", "1", png],
  ]);
}

for (const { name, times } of CASES) {
  test(`the preview of ${name} shows what its render draws`, async ({ browser }) => {
    const output = join(scratch, `${name}.mp4`);
    await renderComposition({
      projectDir: join(PROJECTS, name),
      output,
      fps: FPS,
      quality: "high",
      allowNetwork: false,
      thumbnail: false,
    });

    const context = await browser.newContext({ viewport: { width: 1920, height: 1200 } });
    await context.route(
      (url) => url.origin !== origin,
      async (route) => {
        const answer = await cdnResponse(route.request().url());
        if (!answer) return route.abort();
        return route.fulfill({
          status: 200,
          body: answer.body,
          headers: { "content-type": answer.contentType, "access-control-allow-origin": "*" },
        });
      },
    );
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${origin}/`);
    const player = page.locator("svc-player");
    await player.evaluate(
      (element, src) => element.setAttribute("src", src),
      `/p/${name}/index.html`,
    );
    await expect
      .poll(() =>
        player.evaluate((element) => (element as HTMLElement & { duration: number }).duration),
      )
      .toBeGreaterThan(0);

    const scores: { time: number; score: number; preview: string; render: string }[] = [];
    for (const time of times) {
      await player.evaluate(
        (element, t) => (element as HTMLElement & { seek(t: number): Promise<void> }).seek(t),
        time,
      );
      const preview = join(scratch, `${name}-${time}-preview.png`);
      const render = join(scratch, `${name}-${time}-render.png`);
      await writeFile(preview, await page.locator("svc-player iframe").screenshot());
      await extractFrame(output, Math.round(time * FPS), render);
      scores.push({ time, score: await ssim(preview, render), preview, render });
    }
    const worst = scores.reduce((a, b) => (b.score < a.score ? b : a));
    console.log(
      `${name}: SSIM ${scores.map(({ time, score }) => `${time}s ${score.toFixed(4)}`).join(", ")}`,
    );
    const ffmpeg = await resolveFfmpeg();
    await execFileAsync(ffmpeg.path, [
      ...["-v", "error", "-y", "-i", worst.preview, "-i", worst.render],
      ...["-filter_complex", "[0][1]hstack,scale=1920:-2", join(SHOTS, `parity-${name}.png`)],
    ]);
    await context.close();
    expect(pageErrors).toEqual([]);
    expect(scores.map(({ time, score }) => ({ time, ok: score >= SSIM_BAR, score }))).toEqual(
      times.map((time) => ({ time, ok: true, score: expect.any(Number) })),
    );
  });
}
