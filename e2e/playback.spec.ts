// First run and inline playback in real Chromium through web mode. A new user with no project sees
// "Try an example" and a local service that "starts when you render"; one click opens the bundled
// lower-third with its preview, the next renders it (against a real `svc server`), the queued
// render shows its progress with a percent, and the finished video plays inline in Queue and in
// History: a real <video> whose currentTime advances.
import type { Locator, Page } from "@playwright/test";
import { nav, openAppPage, photograph, signIn } from "./app-page";
import { startWebApp, type WebApp } from "./desktop-web-app";
import { expect, test } from "./fixtures";

const pageErrors: string[] = [];

test.describe.configure({ mode: "serial" });
test.use({ actionTimeout: 15_000 });

test.afterEach(() => {
  expect(pageErrors).toEqual([]);
});

/** Short renders: the options a creator chose last time are kept in the page's storage. */
async function preferQuickRenders(page: Page): Promise<void> {
  await page.evaluate(() => {
    localStorage.setItem(
      "svc-desktop-ui",
      JSON.stringify({
        state: { render: { fps: 2, quality: "draft", format: "mp4", resolution: "1080p" } },
        version: 0,
      }),
    );
  });
  await page.reload();
}

async function expectPlaying(video: Locator): Promise<void> {
  await expect(video).toBeVisible();
  await expect(video).toHaveAttribute("src", /^http:\/\/127\.0\.0\.1:\d+\//);
  const readyAt = await video.evaluate((v: HTMLVideoElement) => v.currentTime);
  await expect
    .poll(() => video.evaluate((v: HTMLVideoElement) => (v.error ? -1 : v.currentTime)), {
      timeout: 30_000,
    })
    .toBeGreaterThan(readyAt + 0.5);
}

test("with no project and a local service, the app offers an example and says the service starts when you render", async ({
  browser,
}) => {
  const app = await startWebApp({ settings: { service: "local" } });
  try {
    const page = await openAppPage(browser, app, pageErrors);
    await expect(page.getByText("Renders on this computer: starts when you render")).toBeVisible();
    await expect(page.getByRole("heading", { name: "Open a project to start" })).toBeVisible();
    await page.getByRole("button", { name: "Try an example" }).click();
    await expect(page.getByTestId("detected-size")).toHaveText("1920×1080");
    await expect(page.locator("svc-player")).toBeVisible();
    await expect(page.getByRole("button", { name: "Render", exact: true })).toBeEnabled();
    // Nothing has needed the service yet: still "starts when you render".
    await expect(page.getByText("Renders on this computer: starts when you render")).toBeVisible();
    await page.close();
  } finally {
    await app.stop();
  }
});

test("Try an example, Render: the queued render shows its progress, then the video plays inline in Queue and History", async ({
  browser,
}) => {
  test.setTimeout(300_000);
  const app: WebApp = await startWebApp();
  try {
    const page = await openAppPage(browser, app, pageErrors);
    await preferQuickRenders(page);
    await signIn(page, app);
    await nav(page, "Project").click();
    await page.getByRole("button", { name: "Try an example" }).click();
    await expect(page.getByTestId("detected-size")).toBeVisible();
    await page.getByRole("button", { name: "Render", exact: true }).click();
    await page.getByRole("button", { name: "Show the queue" }).click();

    const queuedRender = page.getByRole("listitem", { name: "Queued render lower-third" });
    await expect(queuedRender.getByTestId("progress-text")).toHaveText(/^\d+%/);
    await expect(queuedRender.getByTestId("queued-render-stage")).toHaveText("Done", {
      timeout: 200_000,
    });
    await queuedRender.getByRole("button", { name: "Play" }).click();
    await expectPlaying(queuedRender.getByRole("figure").locator("video"));
    await expect(queuedRender.getByText("Playing the downloaded file.")).toBeVisible();
    await photograph(page, "queue-inline-playback");

    await nav(page, "History").click();
    const row = page.getByRole("listitem", { name: "Render lower-third" });
    await row.getByRole("button", { name: "Play" }).click();
    const video = row.getByRole("figure").locator("video");
    await expectPlaying(video);
    // The render's thumbnail is the poster.
    await expect(video).toHaveAttribute("poster", /thumbnail/);
    await photograph(page, "history-inline-playback");
    await page.close();
  } finally {
    await app.stop();
  }
});
