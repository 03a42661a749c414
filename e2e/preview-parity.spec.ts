// Preview equals render, on compositions nobody here wrote: for compositions of the compatibility
// corpus (bench/compat, catalog blocks of the reference renderer), <svc-player> in real Chromium is
// seeked to a time and its picture is compared with the frame svc renders for that time (SSIM, both
// at full size). The player and the engine run the same page runtime, so a difference here means a
// preview that lies to the creator. The browser is offline: every request beyond loopback fails and
// fails the test, so the well-known CDN URLs these compositions use (GSAP, Google Fonts, an npm font
// file on jsdelivr) must be answered by the product's own preview paths from svc's local copies, as
// the engine answers them for the render: the desktop app's preview server with served frames
// (`frame="served"`), and srcdoc frames whose page answers `library-base` with `libraryResponse`
// (as the template's preview page does). x-post (Google Fonts in a sub-composition) and
// variable-font-flex (a font file from jsdelivr in a sub-composition's @font-face) take both paths.
// The worst pair of each composition is kept in e2e/screenshots/parity-<name>.png.
import { execFile } from "node:child_process";
import { readFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { resolveFfmpeg } from "../src/engine/ffmpeg/ffmpeg";
import { libraryResponse } from "../src/node/cdn-files";
import { resolveInsideRoot } from "../src/node/static-files";
import { playerModule } from "../src/engine/bundles/player-bundle";
import { renderComposition } from "../src/engine/render";
import { PreviewServers } from "../src/main/preview-server";
import { contentTypeFor } from "../src/shared/content-types";
import type { Locator } from "@playwright/test";
import { expect, test } from "./fixtures";
import { REPO } from "./template-app";

const execFileAsync = promisify(execFile);
const PROJECTS = join(REPO, "bench", "compat", "projects");
const SHOTS = join(REPO, "e2e", "screenshots");
const FPS = 10;
const SSIM_BAR = 0.98;

type FrameKind = "srcdoc" | "served";

/** Corpus compositions, three times each (seconds, on the 1/10 s frame grid), and their paths. */
const CASES: { name: string; times: number[]; frames: FrameKind[] }[] = [
  { name: "code-morph", times: [0.5, 2.5, 5], frames: ["srcdoc"] },
  { name: "count-up", times: [0.3, 1.2, 2.5], frames: ["srcdoc"] },
  { name: "lower-third-bild", times: [0.5, 1.5, 3], frames: ["srcdoc"] },
  { name: "mk-line-graph", times: [0.5, 2, 4], frames: ["srcdoc"] },
  { name: "macos-notification", times: [0.5, 1.5, 3], frames: ["served"] },
  { name: "caption-kinetic-slam", times: [0.5, 1.5, 2.5], frames: ["served"] },
  { name: "x-post", times: [0.5, 1.5, 4], frames: ["served", "srcdoc"] },
  { name: "variable-font-flex", times: [0.5, 1.5, 3], frames: ["served", "srcdoc"] },
];

test.describe.configure({ mode: "serial" });

let server: Server;
let origin: string;
let scratch: string;
let previews: PreviewServers;
/** Where the srcdoc frames' page answers the CDN URLs (the player's `library-base`). */
const LIBRARY_BASE = "/libs";

const HOST_PAGE = `<!doctype html><html><head><meta charset="utf-8">
<style>html,body{margin:0;background:#000}</style>
<script type="module" src="/svc-player.js"></script></head>
<body><svc-player id="player" width="1920"></svc-player></body></html>`;

test.beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-parity-"));
  await mkdir(SHOTS, { recursive: true });
  const player = await playerModule();
  previews = new PreviewServers();
  server = createServer((req, res) => {
    void (async () => {
      const { pathname: path, search } = new URL(req.url ?? "/", "http://localhost");
      if (path === "/") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(HOST_PAGE);
        return;
      }
      if (path === "/svc-player.js") {
        res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(player);
        return;
      }
      // The srcdoc frame has an opaque origin: its fetches of project files are cross-origin.
      if (path.startsWith(`${LIBRARY_BASE}/cdn/`)) {
        const rest = decodeURIComponent(path.slice(`${LIBRARY_BASE}/cdn/`.length)) + search;
        const answer = await libraryResponse(rest, LIBRARY_BASE);
        if (!answer) {
          res.writeHead(404, { "access-control-allow-origin": "*" }).end();
          return;
        }
        if ("redirect" in answer) {
          res.writeHead(302, { location: answer.redirect, "access-control-allow-origin": "*" });
          res.end();
          return;
        }
        res
          .writeHead(200, {
            "content-type": answer.contentType,
            "access-control-allow-origin": "*",
          })
          .end(answer.body);
        return;
      }
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
  await previews?.close();
  await new Promise((resolve) => server?.close(resolve));
  await rm(scratch, { recursive: true, force: true });
});

/**
 * FFmpeg's SSIM of a preview screenshot and a rendered frame, both in the video's pixel format
 * (yuv420p): the render's colour is stored at half resolution, which alone costs saturated edges
 * (yellow type on black: 0.967 in RGB, 0.998 once the screenshot is subsampled the same way).
 */
async function ssim(preview: string, render: string): Promise<number> {
  const ffmpeg = await resolveFfmpeg();
  const { stderr } = await execFileAsync(ffmpeg.path, [
    ...["-hide_banner", "-i", preview, "-i", render],
    ...["-lavfi", "[0:v]format=yuv420p[a];[1:v]format=yuv420p[b];[a][b]ssim", "-f", "null", "-"],
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

/** The player's frame for the composition `name`, by the path of `frame`. */
async function showComposition(player: Locator, name: string, frame: FrameKind): Promise<void> {
  const src =
    frame === "served"
      ? await previews.urlFor(join(PROJECTS, name), "index.html")
      : `/p/${name}/index.html`;
  await player.evaluate(
    (element, { src, frame, libraryBase }) => {
      if (frame === "served") element.setAttribute("frame", "served");
      else element.setAttribute("library-base", libraryBase);
      element.setAttribute("src", src);
    },
    { src, frame, libraryBase: LIBRARY_BASE },
  );
}

for (const { name, times, frames } of CASES) {
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

    const scores: {
      frame: FrameKind;
      time: number;
      score: number;
      preview: string;
      render: string;
    }[] = [];
    for (const time of times) {
      await extractFrame(
        output,
        Math.round(time * FPS),
        join(scratch, `${name}-${time}-render.png`),
      );
    }
    const remote: string[] = [];
    const pageErrors: string[] = [];
    for (const frame of frames) {
      const context = await browser.newContext({ viewport: { width: 1920, height: 1200 } });
      // Offline: nothing may leave the machine.
      await context.route(
        (url) => url.hostname !== "127.0.0.1",
        (route) => {
          remote.push(route.request().url());
          return route.abort("internetdisconnected");
        },
      );
      const page = await context.newPage();
      page.on("pageerror", (error) => pageErrors.push(error.message));
      await page.goto(`${origin}/`);
      const player = page.locator("svc-player");
      await showComposition(player, name, frame);
      await expect
        .poll(() =>
          player.evaluate((element) => (element as HTMLElement & { duration: number }).duration),
        )
        .toBeGreaterThan(0);

      for (const time of times) {
        await player.evaluate(
          (element, t) => (element as HTMLElement & { seek(t: number): Promise<void> }).seek(t),
          time,
        );
        const preview = join(scratch, `${name}-${frame}-${time}-preview.png`);
        const render = join(scratch, `${name}-${time}-render.png`);
        await writeFile(preview, await page.locator("svc-player iframe").screenshot());
        scores.push({ frame, time, score: await ssim(preview, render), preview, render });
      }
      await context.close();
    }
    const worst = scores.reduce((a, b) => (b.score < a.score ? b : a));
    console.log(
      `${name}: SSIM ${scores.map(({ frame, time, score }) => `${frame} ${time}s ${score.toFixed(4)}`).join(", ")}`,
    );
    const ffmpeg = await resolveFfmpeg();
    await execFileAsync(ffmpeg.path, [
      ...["-v", "error", "-y", "-i", worst.preview, "-i", worst.render],
      ...["-filter_complex", "[0][1]hstack,scale=1920:-2", join(SHOTS, `parity-${name}.png`)],
    ]);
    expect(remote).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(
      scores.map(({ frame, time, score }) => ({ frame, time, ok: score >= SSIM_BAR, score })),
    ).toEqual(
      frames.flatMap((frame) =>
        times.map((time) => ({ frame, time, ok: true, score: expect.any(Number) })),
      ),
    );
  });
}
