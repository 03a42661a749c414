// Preview equals render for every starter template (gallery/), in each size its card lists: the
// desktop app's preview (<svc-player> with a served frame from the app's preview server, the
// player's `aspect-ratio` set to the size) is seeked to three times and compared with the still
// svc renders for that time and size (SSIM >= 0.98, both at full size, in the video's pixel
// format). Lean for CI: stills, not videos; one browser page per template, reused for its sizes.
// The worst pair of each template is kept in e2e/screenshots/gallery-parity-<name>.png.
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { listStarterTemplates } from "../src/core/gallery";
import { resolveFfmpeg } from "../src/engine/ffmpeg/ffmpeg";
import { renderStill } from "../src/engine/outputs/still";
import { closeWarmPages } from "../src/engine/stages/page-pool";
import { playerModule } from "../src/engine/bundles/player-bundle";
import { PreviewServers } from "../src/main/preview-server";
import { fontDataUrl } from "../src/shared/brand";
import { outputSize } from "../src/shared/render-options";
import { expect, test } from "./fixtures";
import { REPO } from "./template-app";

const execFileAsync = promisify(execFile);
const SHOTS = join(REPO, "e2e", "screenshots");
const SSIM_BAR = 0.98;
const FPS = 30;
const { templates } = await listStarterTemplates();

test.describe.configure({ mode: "serial" });

let server: Server;
let origin: string;
let scratch: string;
let previews: PreviewServers;

const HOST_PAGE = `<!doctype html><html><head><meta charset="utf-8">
<style>html,body{margin:0;background:#000}</style>
<script type="module" src="/svc-player.js"></script></head>
<body><svc-player id="player" frame="served"></svc-player></body></html>`;

test.beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-gallery-parity-"));
  await mkdir(SHOTS, { recursive: true });
  const player = await playerModule();
  previews = new PreviewServers();
  server = createServer((req, res) => {
    if (req.url === "/svc-player.js") {
      res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(player);
    } else {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(HOST_PAGE);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  await previews?.close();
  await new Promise((resolve) => server?.close(resolve));
  await closeWarmPages();
  await rm(scratch, { recursive: true, force: true });
});

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

for (const template of templates) {
  test(`the preview of the ${template.name} template shows what its render draws, in every size`, async ({
    browser,
  }) => {
    test.setTimeout(300_000);
    // Early, middle (its poster) and late, on the frame grid.
    const times = [0.5, template.posterTime, template.posterTime < 4 ? 4 : 5].map(
      (t) => Math.round(t * FPS) / FPS,
    );
    const context = await browser.newContext({ viewport: { width: 1920, height: 1920 } });
    const pageErrors: string[] = [];
    const page = await context.newPage();
    page.on("pageerror", (error) => pageErrors.push(error.message));
    await page.goto(`${origin}/`);
    const player = page.locator("svc-player");
    const src = await previews.urlFor(template.dir, "index.html");
    const scores: { size: string; time: number; score: number; preview: string; render: string }[] =
      [];
    for (const size of template.sizes) {
      const { width, height } = outputSize(size, "1080p");
      await player.evaluate(
        (element, { src, size, width, height }) => {
          element.setAttribute("width", String(width));
          element.setAttribute("height", String(height));
          element.setAttribute("aspect-ratio", size);
          element.setAttribute("src", src);
        },
        { src, size, width, height },
      );
      await expect
        .poll(() =>
          player.evaluate((element) => {
            const frame = element.shadowRoot?.querySelector("iframe");
            return (element as HTMLElement & { duration: number }).duration > 0 && frame
              ? `${frame.offsetWidth}x${frame.offsetHeight}`
              : "";
          }),
        )
        .toBe(`${width}x${height}`);
      for (const time of times) {
        const tag = `${template.name}-${size.replace(":", "x")}-${time}`;
        const render = join(scratch, `${tag}-render.png`);
        await renderStill({
          projectDir: template.dir,
          output: render,
          time,
          fps: FPS,
          aspectRatio: size,
          adaptAspectRatio: true,
          // As `svc render` draws a creator's own project on this computer (network open, one
          // browser process); closed pages are parity-checked by preview-parity and
          // captions-parity. A closed still stalled once in 108 here (beginFrame, 2026-11-28).
          allowNetwork: true,
        });
        await player.evaluate(
          (element, t) => (element as HTMLElement & { seek(t: number): Promise<void> }).seek(t),
          time,
        );
        const preview = join(scratch, `${tag}-preview.png`);
        await writeFile(preview, await page.locator("svc-player iframe").screenshot());
        scores.push({ size, time, score: await ssim(preview, render), preview, render });
      }
    }
    await context.close();
    const worst = scores.reduce((a, b) => (b.score < a.score ? b : a));
    console.log(
      `${template.name}: SSIM ${scores.map(({ size, time, score }) => `${size} ${time}s ${score.toFixed(4)}`).join(", ")}`,
    );
    const ffmpeg = await resolveFfmpeg();
    await execFileAsync(ffmpeg.path, [
      ...["-v", "error", "-y", "-i", worst.preview, "-i", worst.render],
      ...[
        "-filter_complex",
        "[0][1]hstack,scale=1280:-2",
        join(SHOTS, `gallery-parity-${template.name}.png`),
      ],
    ]);
    expect(pageErrors).toEqual([]);
    expect(
      scores
        .filter(({ score }) => score < SSIM_BAR)
        .map(({ size, time, score }) => ({ size, time, score })),
    ).toEqual([]);
  });
}

test("a brand font file shows in the preview as the render draws it", async ({ browser }) => {
  // The brand kit's font file travels as a data: URL in the variables (src/shared/brand.ts): the
  // preview's frame gets it in its URL fragment, the render in its page config. Anton (npm
  // @fontsource, SIL OFL) is far from title-card's own Montserrat.
  test.setTimeout(240_000);
  const template = templates.find((entry) => entry.name === "title-card")!;
  const anton = createRequire(import.meta.url).resolve(
    "@fontsource/anton/files/anton-latin-400-normal.woff2",
  );
  const variables = {
    "brand-font": fontDataUrl("Anton.woff2", (await readFile(anton)).toString("base64"))!,
  };
  const time = 2;
  const context = await browser.newContext({ viewport: { width: 1920, height: 1920 } });
  const page = await context.newPage();
  await page.goto(`${origin}/`);
  const player = page.locator("svc-player");
  const src = await previews.urlFor(template.dir, "index.html");
  const scores: number[] = [];
  for (const size of ["16:9", "9:16"] as const) {
    const { width, height } = outputSize(size, "1080p");
    await player.evaluate(
      (element, { src, size, width, height, variables }) => {
        (element as HTMLElement & { variables: unknown }).variables = variables;
        element.setAttribute("width", String(width));
        element.setAttribute("height", String(height));
        element.setAttribute("aspect-ratio", size);
        element.setAttribute("src", src);
      },
      { src, size, width, height, variables },
    );
    await expect
      .poll(() =>
        player.evaluate((element) => {
          const frame = element.shadowRoot?.querySelector("iframe");
          return (element as HTMLElement & { duration: number }).duration > 0 && frame
            ? `${frame.offsetWidth}x${frame.offsetHeight}`
            : "";
        }),
      )
      .toBe(`${width}x${height}`);
    const tag = `brand-font-${size.replace(":", "x")}`;
    const render = join(scratch, `${tag}-render.png`);
    const plain = join(scratch, `${tag}-plain.png`);
    const common = {
      projectDir: template.dir,
      time,
      fps: FPS,
      aspectRatio: size,
      adaptAspectRatio: true,
      allowNetwork: true,
    };
    await renderStill({ ...common, output: render, variables });
    await renderStill({ ...common, output: plain });
    await player.evaluate(
      (element, t) => (element as HTMLElement & { seek(t: number): Promise<void> }).seek(t),
      time,
    );
    const preview = join(scratch, `${tag}-preview.png`);
    await writeFile(preview, await page.locator("svc-player iframe").screenshot());
    const score = await ssim(preview, render);
    scores.push(score);
    // The font is drawn at all: the render with it is not the template's own look.
    expect(await ssim(render, plain)).toBeLessThan(0.98);
    if (size === "9:16") {
      const ffmpeg = await resolveFfmpeg();
      await execFileAsync(ffmpeg.path, [
        ...["-v", "error", "-y", "-i", preview, "-i", render, "-i", plain],
        ...["-filter_complex", "[0][1][2]hstack=3,scale=1620:-2"],
        join(SHOTS, "gallery-parity-brand-font.png"),
      ]);
    }
  }
  await context.close();
  console.log(`brand font file: SSIM ${scores.map((score) => score.toFixed(4)).join(", ")}`);
  expect(scores.filter((score) => score < SSIM_BAR)).toEqual([]);
});
