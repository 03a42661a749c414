// Under the preview, the app says what svc may not render faithfully (the findings of `svc check`,
// run by the main process), in real Chromium through web mode: a project whose image is missing
// shows that error in plain words; an example shows that nothing was found. The findings are
// photographed in both themes (e2e/screenshots/preview-findings-*.png).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Page } from "@playwright/test";
import { nav, openAppPage, openExample, photograph } from "./app-page";
import { REPO, startWebApp, type WebApp } from "./desktop-web-app";
import { expect, test } from "./fixtures";

let app: WebApp;
const pageErrors: string[] = [];
const FIXTURES = join(REPO, "src", "engine", "testing", "check-fixtures");

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

/** Opens a folder under the repository by dropping its path on the Project screen. */
async function openFolder(page: Page, dir: string): Promise<void> {
  await nav(page, "Project").click();
  const dataTransfer = await page.evaluateHandle((uri) => {
    const transfer = new DataTransfer();
    transfer.setData("text/uri-list", uri);
    return transfer;
  }, pathToFileURL(dir).href);
  const screen = page.locator(".project-screen");
  await screen.dispatchEvent("dragenter", { dataTransfer });
  await screen.dispatchEvent("dragover", { dataTransfer });
  await screen.dispatchEvent("drop", { dataTransfer });
  await expect(page.getByRole("region", { name: "Project folder" })).toContainText(dir);
}

test("a missing image is named under the preview, as an error", async ({ browser }) => {
  const page = await openAppPage(browser, app, pageErrors);
  await openFolder(page, join(FIXTURES, "missing-image"));

  const findings = page.getByRole("region", { name: "The video will be missing something" });
  await expect(findings).toBeVisible({ timeout: 60_000 });
  const finding = findings.getByRole("listitem");
  await expect(finding).toHaveCount(1);
  await expect(finding).toHaveAttribute("data-code", "load-failed");
  await expect(finding).toContainText("Error");
  await expect(finding).toContainText(
    "The image /images/missing-logo.png could not be loaded, so the frame is drawn without it.",
  );
  // Under the preview, in the composition's panel.
  const player = await page.locator("svc-player").boundingBox();
  const list = await findings.boundingBox();
  expect(list!.y).toBeGreaterThan(player!.y + player!.height - 1);
  await photograph(page, "preview-findings");
  await page.close();
});

test("warnings read as warnings, and an example shows that nothing was found", async ({
  browser,
}) => {
  const page = await openAppPage(browser, app, pageErrors);
  await openFolder(page, join(FIXTURES, "zero-size"));
  const findings = page.getByRole("region", { name: "The video may not look as intended" });
  await expect(findings.getByRole("listitem")).toContainText(
    "The clip div#banner.clip is 1920×0 px",
    { timeout: 60_000 },
  );
  await expect(findings.getByRole("listitem")).toContainText("Warning");
  await photograph(page, "preview-findings-warning");

  await openExample(page, "hello-world");
  await expect(page.getByTestId("findings-none")).toHaveText(
    "Checked: nothing found that svc may render wrongly.",
    { timeout: 60_000 },
  );
  await expect(page.getByRole("region", { name: /The video/ })).toHaveCount(0);
  await page.close();
});
