// The preview page of templates/preview-render in real Chromium, against the template running
// as its own process with the real engine: <svc-player> plays the bundled composition, a
// changed variable shows in the preview, and Render shows progress, then the video, which
// ffprobe reads at the requested size and fps. Also the page's empty and error states.
// Screenshots into e2e/screenshots/template-*.png.
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { probeMedia } from "../src/engine/testing/probe";
import { expect, test } from "./fixtures";
import { REPO, startTemplate, type TemplateApp } from "./template-app";

const SHOTS = join(REPO, "e2e", "screenshots");

test.describe.configure({ mode: "serial" });
test.use({ actionTimeout: 15_000 });

let app: TemplateApp;
const pageErrors: string[] = [];

test.beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  app = await startTemplate();
});

test.afterAll(async () => {
  await app?.stop();
});

async function openPage(page: Page, url: string): Promise<void> {
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.goto(url);
}

/** The player's state, read through its public API. */
function playerState(page: Page) {
  return page.locator("svc-player").evaluate((element) => {
    const player = element as HTMLElement & {
      duration: number;
      currentTime: number;
      paused: boolean;
    };
    return { duration: player.duration, currentTime: player.currentTime, paused: player.paused };
  });
}

test("the preview page plays the bundled composition and shows a changed variable", async ({
  page,
}) => {
  await openPage(page, app.url);
  await expect(page.getByRole("heading", { name: "Preview and render" })).toBeVisible();
  await expect.poll(async () => (await playerState(page)).duration).toBe(3);
  const frame = page.frameLocator("svc-player iframe");
  await expect(frame.locator(".title")).toHaveText("Hello from svc");
  await expect(page.getByText("title-card · 1920×1080 · 3 s")).toBeVisible();

  // A newly loaded composition is shown 40% in (its frame 0 is empty: everything animates in).
  await expect.poll(async () => (await playerState(page)).currentTime).toBeCloseTo(1.2, 5);
  await page.locator("svc-player").getByRole("button", { name: "Play" }).click();
  await expect.poll(async () => (await playerState(page)).paused).toBe(false);
  await expect
    .poll(async () => Math.abs((await playerState(page)).currentTime - 1.2))
    .toBeGreaterThan(0.3);
  await page.locator("svc-player").getByRole("button", { name: "Pause" }).click();
  await expect.poll(async () => (await playerState(page)).paused).toBe(true);

  // Every declared variable has a field of its type, starting from its default.
  await expect(page.getByLabel("Title", { exact: true })).toHaveValue("Hello from svc");
  await expect(page.getByLabel("Accent colour")).toHaveValue("#7a5cff");
  await expect(page.getByLabel("Theme")).toHaveValue("dark");
  await page.getByLabel("Title", { exact: true }).fill("Changed live");
  await page.getByLabel("Theme").selectOption("light");
  await expect(frame.locator(".title")).toHaveText("Changed live");
  await expect(frame.locator("#card")).toHaveClass(/theme-light/);
  await page
    .locator("svc-player")
    .evaluate((element) => (element as HTMLElement & { seek(t: number): Promise<void> }).seek(2));
  await page.screenshot({ path: join(SHOTS, "template-preview.png") });
  expect(pageErrors).toEqual([]);
});

test("Render shows progress, then the video, which ffprobe reads at the requested size and fps", async ({
  page,
}) => {
  await openPage(page, app.url);
  await expect.poll(async () => (await playerState(page)).duration).toBe(3);
  await page.getByLabel("Title", { exact: true }).fill("Rendered");
  await page.getByLabel("Frames per second").fill("4");
  await page.getByLabel("Quality").selectOption("draft");
  await page.getByRole("button", { name: "Render" }).click();
  await expect(page.getByRole("status").filter({ hasText: /Rendering…|Starting/ })).toBeVisible();
  await expect(page.getByRole("button", { name: "Render" })).toBeDisabled();
  await page.screenshot({ path: join(SHOTS, "template-rendering.png") });

  const video = page.getByRole("region", { name: "Rendered video" }).locator("video");
  await expect(video).toHaveAttribute("src", /^\/renders\/call_[0-9a-f]{16}\.mp4$/, {
    timeout: 150_000,
  });
  await expect(page.getByText("Done.")).toBeVisible();
  await expect(page.getByRole("button", { name: "Render" })).toBeEnabled();
  // The video shows a representative frame (40% in) until it is played, like the preview.
  await expect
    .poll(() => video.evaluate((element) => (element as HTMLVideoElement).currentTime))
    .toBeCloseTo(1.2, 1);
  await expect
    .poll(() =>
      video.evaluate((element) => {
        const media = element as HTMLVideoElement;
        return !media.seeking && media.readyState >= 2;
      }),
    )
    .toBe(true);
  await page.screenshot({ path: join(SHOTS, "template-done.png"), fullPage: true });

  const url = (await video.getAttribute("src"))!;
  const response = await page.request.get(`${app.url}${url}`);
  expect(response.status()).toBe(200);
  const dir = await mkdtemp(join(tmpdir(), "svc-template-e2e-"));
  try {
    const file = join(dir, "render.mp4");
    await writeFile(file, await response.body());
    const info = await probeMedia(file);
    expect(info.streams.find((stream) => stream.type === "video")).toMatchObject({
      codec: "h264",
      width: 1920,
      height: 1080,
      fps: 4,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  expect(pageErrors).toEqual([]);
});

test("a refused render says why next to the Render button", async ({ page }) => {
  await openPage(page, app.url);
  await expect.poll(async () => (await playerState(page)).duration).toBe(3);
  await page.getByLabel("Resolution").selectOption("4k");
  await page.getByLabel("Format").selectOption("webm");
  await page.getByRole("button", { name: "Render" }).click();
  await expect(
    page.getByRole("status").filter({ hasText: "4k cannot be rendered as webm" }),
  ).toBeVisible();
  await expect(page.getByRole("status")).toContainText("(invalid_parameter)");
  await expect(page.getByRole("status")).toHaveAttribute("data-tone", "error");
  await expect(page.getByRole("button", { name: "Render" })).toBeEnabled();
  await page.screenshot({ path: join(SHOTS, "template-refused.png") });
});

test("with no compositions the page says how to add one", async ({ page }) => {
  const empty = await mkdtemp(join(tmpdir(), "svc-template-empty-"));
  const bare = await startTemplate({ COMPOSITIONS_DIR: empty });
  try {
    await openPage(page, bare.url);
    await expect(page.getByRole("alert")).toContainText("There are no compositions yet");
    await expect(page.getByRole("button", { name: "Render" })).toBeDisabled();
    await page.screenshot({ path: join(SHOTS, "template-empty.png") });
  } finally {
    await bare.stop();
    await rm(empty, { recursive: true, force: true });
  }
});

test("the preview loads a composition's sub-composition files (the frame's opaque origin may read them)", async ({
  page,
}) => {
  const dir = await mkdtemp(join(tmpdir(), "svc-template-sub-"));
  await cp(join(REPO, "examples", "multi-scene"), join(dir, "multi-scene"), { recursive: true });
  const withSub = await startTemplate({ COMPOSITIONS_DIR: dir });
  try {
    await openPage(page, withSub.url);
    const frame = page.frameLocator("svc-player iframe");
    await expect(frame.locator(".badge-root")).toHaveCount(1);
    expect(pageErrors).toEqual([]);
  } finally {
    await withSub.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
