// Getting a project and its files into the Project screen without the folder dialog, in real
// Chromium through web mode: a folder dropped as a file:// URI opens; a drop without a path, or
// with a folder outside the browser's root, says why it cannot open; an image variable's
// "Choose…" offers only the project's images and sets a project-relative path, and the main
// process refuses to list anything outside the project.
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Page } from "@playwright/test";
import { nav, openAppPage, photograph } from "./app-page";
import { REPO, startWebApp, type WebApp } from "./desktop-web-app";
import { expect, test } from "./fixtures";

let app: WebApp;
let scratch: string;
const pageErrors: string[] = [];

test.describe.configure({ mode: "serial" });
test.use({ actionTimeout: 15_000 });

test.beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-project-input-e2e-"));
  app = await startWebApp();
});

test.afterAll(async () => {
  await app?.stop();
  await rm(scratch, { recursive: true, force: true });
});

test.afterEach(() => {
  expect(pageErrors).toEqual([]);
});

/** Dispatches dragenter, dragover and drop on the Project screen with these data items. */
async function drop(page: Page, items: Record<string, string>): Promise<void> {
  const dataTransfer = await page.evaluateHandle((data) => {
    const transfer = new DataTransfer();
    for (const [type, value] of Object.entries(data)) transfer.setData(type, value);
    return transfer;
  }, items);
  const screen = page.locator(".project-screen");
  await screen.dispatchEvent("dragenter", { dataTransfer });
  await screen.dispatchEvent("dragover", { dataTransfer });
  await expect(screen).toHaveClass(/dragging/);
  await screen.dispatchEvent("drop", { dataTransfer });
}

test("a folder dropped as a file:// URI opens as the project; other drops say why not", async ({
  browser,
}) => {
  const page = await openAppPage(browser, app, pageErrors);
  await nav(page, "Project").click();

  await drop(page, { "text/plain": "just some words" });
  await expect(page.getByRole("alert")).toContainText("That drop has no folder path");
  await expect(page.getByRole("heading", { name: "Open a project to start" })).toBeVisible();

  // Web mode opens only folders its folder browser may show (the repository in this harness).
  await drop(page, { "text/uri-list": pathToFileURL(scratch).href });
  await expect(page.getByRole("alert")).toContainText("is not in a folder this browser shows");

  const lowerThird = join(REPO, "examples", "lower-third");
  await drop(page, {
    "text/uri-list": `# dropped from a file manager\r\n${pathToFileURL(lowerThird).href}`,
  });
  await expect(page.getByTestId("detected-size")).toHaveText("1920×1080");
  await expect(page.getByRole("region", { name: "Project folder" })).toContainText(lowerThird);
  await expect(page.getByRole("alert")).toHaveCount(0);

  // A plain absolute path works as well.
  await drop(page, { "text/plain": join(REPO, "examples", "hello-world") });
  await expect(page.getByRole("region", { name: "Project folder" })).toContainText("hello-world");
  await page.close();
});

test("an image variable's Choose… picks an image inside the project as a relative path", async ({
  browser,
}) => {
  // lower-third with a nested image folder and a file that is not an image.
  const project = join(scratch, "brand-kit");
  await cp(join(REPO, "examples", "lower-third"), project, { recursive: true });
  await mkdir(join(project, "images", "brand"), { recursive: true });
  await cp(join(project, "logo.svg"), join(project, "images", "brand", "mark.svg"));
  await writeFile(join(project, "images", "brand", "notes.txt"), "not an image");

  const page = await openAppPage(browser, app, pageErrors);
  await nav(page, "Settings").click();
  const folderRoot = page.getByLabel("Only show folders under (in a browser tab)");
  const previousRoot = await folderRoot.inputValue();
  await folderRoot.fill(scratch);
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.getByText("Saved.")).toBeVisible();
  try {
    await nav(page, "Project").click();
    await drop(page, { "text/uri-list": pathToFileURL(project).href });
    await expect(page.getByTestId("detected-size")).toHaveText("1920×1080");

    const logo = page.getByLabel("Logo", { exact: true });
    await expect(logo).toHaveText("logo.svg");
    await page.getByRole("button", { name: "Choose… for Logo" }).click();
    const dialog = page.getByRole("dialog", { name: "Choose an image for Logo" });
    await expect(dialog.getByLabel("Current folder")).toHaveText(project);
    await expect(dialog.getByRole("button", { name: "Up one folder" })).toBeDisabled();
    await expect(dialog.getByRole("button", { name: "Use logo.svg" })).toBeVisible();
    await expect(dialog.getByRole("button", { name: /index\.html/ })).toHaveCount(0);
    await dialog.getByRole("button", { name: "images" }).click();
    await dialog.getByRole("button", { name: "brand" }).click();
    await expect(dialog.getByLabel("Current folder")).toHaveText(/images\/brand$/);
    await expect(dialog.getByRole("button", { name: /notes\.txt/ })).toHaveCount(0);
    await photograph(page, "project-image-picker", { fullPage: false });
    await dialog.getByRole("button", { name: "Use mark.svg" }).click();
    await expect(dialog).toBeHidden();
    await expect(logo).toHaveText("mark.svg");
    await page
      .getByRole("region", { name: "Render", exact: true })
      .getByText("For developers")
      .click();
    await expect(page.getByLabel("CLI command")).toContainText('"logo":"images/brand/mark.svg"');

    // The main process lists nothing outside the project, however the path is written.
    const refused = await page.evaluate(
      async ({ dir, outside }) => {
        const token = new URLSearchParams(location.hash.slice(1)).get("token");
        const answers = [];
        for (const path of [outside, `${dir}/../..`]) {
          const response = await fetch("/api/ipc/project.listImages", {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ dir, path }),
          });
          answers.push(((await response.json()) as { error?: { code: string } }).error?.code);
        }
        return answers;
      },
      { dir: project, outside: tmpdir() },
    );
    expect(refused).toEqual(["path_outside_project", "path_outside_project"]);
  } finally {
    await nav(page, "Settings").click();
    await folderRoot.fill(previousRoot);
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await expect(page.getByText("Saved.")).toBeVisible();
    await page.close();
  }
});
