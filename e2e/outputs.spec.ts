// Several files from one render, in real Chromium through web mode against a real `svc server`
// (issue 25): a creator opens examples/adaptive, ticks 16:9, 9:16 and 1:1 and a poster under
// Render options and presses Render once. The service sees one upload and one render request;
// four files arrive with the right sizes (decoded with ffprobe and from the PNG header); each is
// shown in Queue and History, a video playing and the poster showing; the credits charged are the
// ones quoted before rendering. Draft quality at 4 fps keeps the three 3 s videos to 12 frames.
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Locator, Page } from "@playwright/test";
import { serviceCounts } from "../src/cli/testing/cloud-service";
import { probeMedia } from "../src/engine/testing/probe";
import { nav, openAppPage, openExample, photograph, signIn } from "./app-page";
import { startWebApp, type WebApp } from "./desktop-web-app";
import { expect, test } from "./fixtures";

let app: WebApp;
const pageErrors: string[] = [];

test.describe.configure({ mode: "serial" });
test.use({ actionTimeout: 15_000 });

test.beforeAll(async () => {
  app = await startWebApp();
});

test.afterAll(async () => {
  await app?.stop();
});

test.afterEach(() => {
  expect(pageErrors).toEqual([]);
});

/** Width and height from a PNG's IHDR chunk. */
async function pngSize(file: string): Promise<{ width: number; height: number }> {
  const bytes = await readFile(file);
  expect(bytes.subarray(1, 4).toString("latin1")).toBe("PNG");
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** Every tile plays its video or shows its picture. */
async function expectEveryFileShows(files: Locator): Promise<void> {
  const tiles = files.getByRole("listitem");
  await expect(tiles).toHaveCount(4);
  for (const label of ["16:9 video", "9:16 video", "1:1 video"]) {
    const tile = files.getByRole("listitem", { name: `File ${label}` });
    await tile.getByRole("button", { name: `Play ${label}` }).click();
    const video = tile.getByRole("figure").locator("video");
    await expect(video).toBeVisible();
    await expect
      .poll(() => video.evaluate((v: HTMLVideoElement) => (v.error ? -1 : v.readyState)), {
        timeout: 30_000,
      })
      .toBeGreaterThanOrEqual(1);
  }
  const poster = files.getByRole("listitem", { name: /^File 16:9 poster at 1\.5 s$/ });
  await poster.getByRole("button", { name: /^View / }).click();
  const picture = poster.getByRole("figure").locator("img");
  await expect
    .poll(() => picture.evaluate((img: HTMLImageElement) => img.naturalWidth), {
      timeout: 30_000,
    })
    .toBe(1920);
}

async function tick(page: Page, name: string): Promise<void> {
  const box = page.getByRole("checkbox", { name });
  await box.check();
  await expect(box).toBeChecked();
}

test("tick 16:9, 9:16, 1:1 and a poster, Render once: one upload, one request, four files in Queue and History, charged as quoted", async ({
  browser,
}) => {
  test.setTimeout(600_000);
  const page = await openAppPage(browser, app, pageErrors, { width: 1280, height: 900 });
  await signIn(page, app);
  await openExample(page, "adaptive");
  await page.getByLabel("Frames per second").fill("4");
  await page.getByLabel("Quality").selectOption("draft");
  await expect(page.getByRole("checkbox", { name: /^16:9 landscape/ })).toBeChecked();
  await tick(page, "9:16 portrait");
  await tick(page, "1:1 square");
  await tick(page, "A poster picture");
  await page.getByRole("textbox", { name: "Poster time in seconds" }).fill("1.5");
  // Three 3 s videos at 3 credits each and a still at 1: quoted before anything is sent.
  const made = page.getByLabel("What one render makes");
  await expect(made).toHaveText(
    "One render makes 3 videos and a poster picture. Estimated cost: 10 credits",
  );
  await expect(page.getByLabel("Estimated time on the service")).toContainText(
    "on the service for 37 frames",
  );
  await photograph(page, "outputs-render-options", { fullPage: false });

  const before = await serviceCounts(app.service.dataDir);
  await page.getByRole("button", { name: "Render", exact: true }).click();
  await page.getByRole("button", { name: "Show the queue" }).click();
  const queuedRender = page.getByRole("listitem", { name: "Queued render adaptive" });
  await expect(queuedRender.getByTestId("queued-render-stage")).toHaveText("Done", {
    timeout: 480_000,
  });
  expect(await serviceCounts(app.service.dataDir)).toEqual({
    assets: before.assets + 1,
    renders: before.renders + 1,
    creditsUsed: before.creditsUsed + 10,
  });

  // Four files beside each other in the downloads folder, at their sizes.
  const names = (await readdir(app.downloadsDir)).filter((name) => !name.startsWith("."));
  expect(names).toHaveLength(4);
  const find = (pattern: RegExp) =>
    join(
      app.downloadsDir,
      names.find((n) => pattern.test(n))!,
    );
  const sizes = await Promise.all(
    [/\d{4}-\d\d-\d\d\.mp4$/, /-9x16\.mp4$/, /-1x1\.mp4$/].map(async (pattern) => {
      const video = (await probeMedia(find(pattern))).streams.find((s) => s.type === "video")!;
      return [video.width, video.height];
    }),
  );
  expect(sizes).toEqual([
    [1920, 1080],
    [1080, 1920],
    [1080, 1080],
  ]);
  expect(await pngSize(find(/-1\.5s\.png$/))).toEqual({ width: 1920, height: 1080 });

  const queueFiles = queuedRender.getByRole("list", { name: "Files" });
  await expectEveryFileShows(queueFiles);
  await photograph(page, "outputs-queue");

  // Charged exactly the quote: the render's record and the service's own quote of these outputs.
  const client = (path: string, init?: RequestInit) =>
    fetch(`${app.service.url}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${app.service.apiKey}`,
        "content-type": "application/json",
      },
    }).then((response) => response.json() as Promise<Record<string, unknown>>);
  const list = (await client("/v3/svc/renders")) as {
    data: Array<{ credits_charged: number; outputs: Array<{ credits_charged: number }> }>;
  };
  expect(list.data[0]!.credits_charged).toBe(10);
  expect(list.data[0]!.outputs.map((output) => output.credits_charged)).toEqual([3, 3, 3, 1]);

  await nav(page, "History").click();
  const row = page.getByRole("listitem", { name: "Render adaptive" });
  await expect(row).toContainText("10 credits");
  const historyFiles = row.getByRole("list", { name: "Files" });
  await expectEveryFileShows(historyFiles);
  // Downloaded here: each file can be opened or shown in its folder.
  await expect(historyFiles.getByRole("button", { name: /^Show in folder / })).toHaveCount(4);
  await photograph(page, "outputs-history");
  await page.close();
});
