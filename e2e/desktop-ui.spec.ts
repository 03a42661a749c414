// The desktop app's screens in real Chromium through web mode, against a real `svc server`: the
// creator's path from picking examples/lower-third to a downloaded, ffprobe-readable mp4 listed in
// History; strict variables blocking Render; 4k + webm refused. Every screen is photographed in
// its empty and filled state, light and dark, into e2e/screenshots/.
import { existsSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { Browser, Page } from "@playwright/test";
import { probeMedia } from "../src/engine/testing/probe";
import { expect, test } from "./fixtures";
import {
  nav,
  openAppPage,
  photograph,
  SHOTS,
  signIn as signInWith,
  upToRepository,
} from "./app-page";
import type { QueuedRenderView } from "../src/shared/ipc";
import { appIpc, startWebApp, type WebApp } from "./desktop-web-app";

let app: WebApp;
const pageErrors: string[] = [];

const TINY_COMPOSITION = `<!doctype html><html><head><meta charset="utf-8"></head><body>
<div data-composition-id="main" data-width="1920" data-height="1080" data-duration="1"
 style="width:1920px;height:1080px;background:#246"></div></body></html>`;

test.describe.configure({ mode: "serial" });
test.use({ actionTimeout: 15_000 });

test.beforeAll(async () => {
  // Not emptied first: other specs write their screenshots here too; each name is overwritten.
  await mkdir(SHOTS, { recursive: true });
  // No program to open files with: "Open file" must say so (history.spec.ts has a working one).
  app = await startWebApp({ env: { SVC_FILE_OPENER: "/nonexistent/svc-file-opener" } });
});

test.afterAll(async () => {
  await app?.stop();
});

const cspViolations: string[] = [];
const isCspViolation = (text: string) => text.includes("Content Security Policy");

async function openApp(browser: Browser): Promise<Page> {
  // An uncaught error in the UI fails the test (checked in closePage), with its message; so does
  // anything the app's Content-Security-Policy refuses, from the first load on.
  const page = await openAppPage(browser, app, pageErrors);
  const earlier = (await page.consoleMessages()).map((message) => message.text());
  cspViolations.push(...earlier.filter(isCspViolation));
  page.on("console", (message) => {
    if (isCspViolation(message.text())) cspViolations.push(message.text());
  });
  return page;
}

async function closePage(page: Page): Promise<void> {
  await page.close();
  expect(pageErrors).toEqual([]);
  expect(cspViolations).toEqual([]);
}

function signIn(page: Page): Promise<void> {
  return signInWith(page, app);
}

async function openLowerThird(page: Page, options: { photograph?: boolean } = {}): Promise<void> {
  await nav(page, "Project").click();
  await page.getByRole("button", { name: "Choose folder…" }).click();
  const dialog = page.getByRole("dialog", { name: "Choose a project folder" });
  await upToRepository(dialog);
  await dialog.getByRole("button", { name: "examples" }).click();
  await expect(dialog.getByLabel("Current folder")).toHaveText(/examples$/);
  if (options.photograph) await photograph(page, "folder-browser");
  await dialog.getByRole("button", { name: "lower-third" }).click();
  await expect(dialog.getByLabel("Current folder")).toHaveText(/lower-third$/);
  if (!existsSync(join(SHOTS, "folder-browser-light.png")))
    await photograph(page, "folder-browser");
  await dialog.getByRole("button", { name: "Use this folder" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId("detected-size")).toHaveText("1920×1080");
}

function previewFrame(page: Page) {
  return page.frameLocator("svc-player iframe");
}

test("every screen has an empty state before anything is opened or rendered", async ({
  browser,
}) => {
  const page = await openApp(browser);
  await expect(page.getByRole("heading", { name: "Open a project to start" })).toBeVisible();
  // The header's toggle picks a theme; Settings goes back to following the system.
  const html = page.locator("html");
  await page.emulateMedia({ colorScheme: "light" });
  await expect(html).toHaveAttribute("data-theme", "light");
  await page.getByRole("button", { name: "Use the dark theme" }).click();
  await expect(html).toHaveAttribute("data-theme", "dark");
  await page.getByRole("button", { name: "Use the light theme" }).click();
  await expect(html).toHaveAttribute("data-theme", "light");
  await nav(page, "Settings").click();
  await page.getByRole("combobox", { name: /^Theme/ }).selectOption("system");
  await nav(page, "Project").click();
  await photograph(page, "project-empty");
  await nav(page, "Queue").click();
  await expect(page.getByText("No renders yet.")).toBeVisible();
  await photograph(page, "queue-empty");
  await nav(page, "Account").click();
  await expect(page.getByRole("heading", { name: "Not signed in" })).toBeVisible();
  await photograph(page, "account-signed-out");
  await nav(page, "History").click();
  await expect(page.getByText("Sign in to see the renders of your account.")).toBeVisible();
  await photograph(page, "history-error-signed-out");
  await signIn(page);
  await nav(page, "History").click();
  await expect(page.getByText("The service has no renders for this account yet.")).toBeVisible();
  await photograph(page, "history-empty");
  await nav(page, "Settings").click();
  await expect(page.getByLabel("Downloads folder")).toHaveValue(app.downloadsDir);
  await photograph(page, "settings");
  const concurrency = page.getByLabel("Renders at once");
  await concurrency.fill("2");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.getByText("Saved.")).toBeVisible();
  await page.reload();
  await nav(page, "Settings").click();
  await expect(concurrency).toHaveValue("2");
  await concurrency.fill("1");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await expect(page.getByText("Saved.")).toBeVisible();
  await closePage(page);
});

test("strict mode blocks Render on an invalid variable, values travel as JSON, and 4k cannot be webm", async ({
  browser,
}) => {
  const page = await openApp(browser);
  await openLowerThird(page, { photograph: true });
  const render = page.getByRole("button", { name: "Render", exact: true });
  await expect(render).toBeEnabled();

  const size = page.getByLabel("Name size (px)");
  await size.fill("200");
  await expect(page.getByRole("alert").filter({ hasText: "Name size (px)" })).toBeVisible();
  await expect(render).toBeDisabled();
  await expect(page.getByText("Fix the variable values marked above first.")).toBeVisible();
  await photograph(page, "project-invalid-variable");
  // A value outside its range is refused by the service whatever strict says (SPEC.md 4).
  await page.getByRole("checkbox", { name: "Strict" }).uncheck();
  await expect(render).toBeDisabled();
  await expect(page.getByText("a wrong type, choice or range is refused")).toBeVisible();
  await page.getByRole("checkbox", { name: "Strict" }).check();
  await expect(render).toBeDisabled();
  await page.getByRole("button", { name: "Reset to defaults" }).click();
  await expect(size).toHaveValue("64");
  await expect(render).toBeEnabled();

  // Values travel as JSON files: import sets them, export writes what the form holds.
  await page.getByLabel("Import values…").setInputFiles({
    name: "values.json",
    mimeType: "application/json",
    buffer: Buffer.from(JSON.stringify({ title: "Katherine Johnson", size: 72 })),
  });
  await expect(page.getByLabel("Name", { exact: true })).toHaveValue("Katherine Johnson");
  await expect(size).toHaveValue("72");
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export values" }).click();
  const exported = JSON.parse(await readFile((await (await download).path())!, "utf8")) as Record<
    string,
    unknown
  >;
  expect(exported).toMatchObject({ title: "Katherine Johnson", size: 72, style: "dark" });
  await page.getByLabel("Import values…").setInputFiles({
    name: "broken.json",
    mimeType: "application/json",
    buffer: Buffer.from("[1, 2"),
  });
  await expect(page.getByText("broken.json is not JSON.")).toBeVisible();
  await page.getByRole("button", { name: "Reset to defaults" }).click();
  await expect(size).toHaveValue("64");

  const resolution = page.getByLabel("Resolution");
  const format = page.getByLabel("Format");
  await resolution.selectOption("4k");
  await expect(format.locator('option[value="webm"]')).toBeDisabled();
  await expect(format.locator('option[value="mov"]')).toBeDisabled();
  // The reason is in the option itself: no warning about webm lingers while mp4 is chosen.
  await expect(format.locator('option[value="webm"]')).toHaveText("webm (not with 4k)");
  await expect(format.locator('option[value="webm"]')).toHaveAttribute(
    "title",
    /4k cannot be rendered as webm/,
  );
  await expect(page.getByText(/4k cannot be rendered as webm/)).toHaveCount(0);
  await resolution.selectOption("1080p");
  await format.selectOption("webm");
  await expect(resolution.locator('option[value="4k"]')).toBeDisabled();
  await expect(resolution.locator('option[value="4k"]')).toHaveText("4k (not with webm)");
  await format.selectOption("mp4");
  await expect(resolution.locator('option[value="4k"]')).toBeEnabled();
  await closePage(page);
});

test("a creator previews lower-third, changes its title, renders it and finds it in History", async ({
  browser,
}) => {
  const page = await openApp(browser);
  await signIn(page);
  await openLowerThird(page);

  // The preview shows the default title and plays.
  await expect(previewFrame(page).getByText("Ada Lovelace")).toBeVisible();
  const player = page.locator("svc-player");
  await player.getByRole("button", { name: "Play" }).click();
  await page.waitForFunction(
    () =>
      (document.querySelector("svc-player") as unknown as { currentTime: number }).currentTime >
      0.5,
  );

  // Changing the title variable changes the preview.
  await page.getByLabel("Name", { exact: true }).fill("Grace Hopper");
  await expect(previewFrame(page).getByText("Grace Hopper")).toBeVisible();
  await expect(previewFrame(page).getByText("Ada Lovelace")).toHaveCount(0);

  // The dry run lists the files that would be uploaded.
  await page.getByRole("button", { name: "Dry run" }).click();
  const report = page.getByTestId("dry-run-report");
  await expect(report.getByRole("cell", { name: "index.html" })).toBeVisible();
  await expect(report.getByRole("cell", { name: "logo.svg" })).toBeVisible();
  await expect(report.getByRole("status")).toHaveText(/files/);

  // A low frame rate keeps the render short on a small machine.
  await page.getByLabel("Frames per second").fill("5");
  await expect(page.getByLabel("CLI command")).toBeHidden();
  await page
    .getByRole("region", { name: "Render", exact: true })
    .getByText("For developers")
    .click();
  await expect(page.getByLabel("CLI command")).toHaveText(
    /^svc cloud render \S+lower-third --fps 5 .*--variables '\{"title":"Grace Hopper"\}' --strict-variables$/,
  );
  await page
    .context()
    .grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(app.url).origin });
  await page.getByRole("button", { name: "Copy CLI command" }).click();
  await expect(page.getByText("Copied to the clipboard.")).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
    await page.getByLabel("CLI command").textContent(),
  );
  await page.evaluate(() => window.scrollTo(0, 0));
  await photograph(page, "project-filled");

  // Record every stage the queue shows, so "advancing" is checked, not just the end.
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { seenStages: string[] }).seenStages = seen;
    const record = () => {
      for (const badge of document.querySelectorAll('[data-testid="queued-render-stage"]')) {
        const text = badge.textContent ?? "";
        if (seen[seen.length - 1] !== text) seen.push(text);
      }
    };
    new MutationObserver(record).observe(document.body, {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });
  await page.getByRole("button", { name: "Render", exact: true }).click();
  await expect(page.getByText("was added to the queue")).toBeVisible();
  await page.getByRole("button", { name: "Show the queue" }).click();
  const queuedRender = page.getByRole("listitem", { name: "Queued render lower-third" });
  await expect(queuedRender.getByTestId("queued-render-stage")).toHaveText("Done", {
    timeout: 150_000,
  });
  const stages = await page.evaluate(
    () => (window as unknown as { seenStages: string[] }).seenStages,
  );
  // Advancing: at least three stages, each later than the one before, ending at Done. Which ones
  // are seen depends on timing (a short render can finish between two polls of the service).
  const order = ["Waiting", "Zipping", "Uploading", "Queued", "Rendering", "Downloading", "Done"];
  const positions = stages.map((stage) => order.indexOf(stage));
  expect(positions).not.toContain(-1);
  expect(positions).toEqual([...positions].sort((a, b) => a - b));
  expect(stages[stages.length - 1]).toBe("Done");
  expect(new Set(stages).size).toBeGreaterThanOrEqual(3);

  const output = (await queuedRender
    .getByTestId("queued-render-output")
    .getAttribute("data-path"))!;
  expect(existsSync(output)).toBe(true);
  // A creator reads the file's name; its folder is behind "Show in folder", not on the card.
  await expect(queuedRender.getByTestId("queued-render-output")).toHaveText(basename(output));
  const media = await probeMedia(output);
  const video = media.streams.find((stream) => stream.type === "video");
  expect(video).toMatchObject({ codec: "h264", width: 1920, height: 1080 });
  expect(media.durationSeconds).toBeGreaterThan(3.5);
  await photograph(page, "queue-filled");
  await queuedRender.getByRole("button", { name: "Open file" }).click();
  await expect(queuedRender.getByRole("alert")).toContainText("No program to open files with");
  await expect(queuedRender.getByRole("alert")).toContainText("SVC_FILE_OPENER");
  await photograph(page, "queue-open-file-error");

  // History lists it; downloading it again (a fresh signed URL) works; delete removes it.
  await nav(page, "History").click();
  const row = page.getByRole("listitem", { name: "Render lower-third" });
  await expect(row).toBeVisible();
  await expect(row.getByTestId("render-status")).toHaveText("Done");
  await photograph(page, "history-filled");
  // The answer to "Download" is held until the queued render it queued has finished in the app: its
  // events then all reach the page before the answer, which must not put the queued render back to
  // Waiting. (This ordering, by chance, was the "queued render stays Waiting" flake of a
  // clean-clone CI run: the scheduler had run the queued render; the page showed the answer's stale
  // copy.)
  await page.route("**/api/ipc/renders.download", async (route) => {
    const response = await route.fetch();
    const answer = (await response.json()) as { data: { id: string } };
    await expect
      .poll(
        async () =>
          (await appIpc<QueuedRenderView[]>(app, "queue.list")).find((j) => j.id === answer.data.id)
            ?.status,
        { timeout: 60_000 },
      )
      .toBe("completed");
    await route.fulfill({ response });
  });
  await row.getByRole("button", { name: "Download" }).click();
  await row.getByRole("button", { name: "Show the queue" }).click({ timeout: 75_000 });
  await expect(page.getByRole("listitem", { name: "Queued render lower-third" })).toHaveCount(2);
  const downloads = page.getByRole("listitem", { name: "Queued render lower-third" });
  await expect(downloads.getByTestId("queued-render-stage")).toHaveText(["Done", "Done"], {
    timeout: 60_000,
  });
  const second = (await downloads
    .first()
    .getByTestId("queued-render-output")
    .getAttribute("data-path"))!;
  // A download from History went through one stage only.
  await expect(
    downloads.first().getByRole("list", { name: "Stages" }).getByRole("listitem"),
  ).toHaveText([/Downloading/]);
  expect((await probeMedia(second)).durationSeconds).toBeGreaterThan(3.5);

  await nav(page, "History").click();
  await row.getByRole("button", { name: "Delete…" }).click();
  await photograph(page, "history-confirm-delete");
  await row.getByRole("button", { name: "Yes, delete" }).click();
  await expect(row).toHaveCount(0);
  await expect(page.getByText("The service has no renders for this account yet.")).toBeVisible();

  await nav(page, "Account").click();
  await expect(page.getByTestId("account-user")).toBeVisible();
  await photograph(page, "account-signed-in");

  // The narrowest supported window keeps its layout.
  await page.setViewportSize({ width: 1024, height: 700 });
  await nav(page, "Project").click();
  await expect(previewFrame(page).getByText("Grace Hopper")).toBeVisible();
  await page.screenshot({ path: join(SHOTS, "project-1024x700.png"), fullPage: true });
  for (const screen of ["Queue", "History", "Account", "Settings"] as const) {
    await nav(page, screen).click();
    await photograph(page, `${screen.toLowerCase()}-1024x700`);
  }
  await closePage(page);
});

test("an oversize project shows the over-limit report, and its render fails before any upload", async ({
  browser,
}) => {
  // 210 MiB that does not compress, next to a tiny composition, in a folder of its own.
  const root = await mkdtemp(join(tmpdir(), "svc-oversize-"));
  const project = join(root, "oversize");
  await mkdir(join(project, "footage"), { recursive: true });
  await writeFile(join(project, "index.html"), TINY_COMPOSITION);
  const footage = await open(join(project, "footage", "raw.bin"), "w");
  for (let mib = 0; mib < 210; mib += 10) await footage.write(randomBytes(10 * 1024 * 1024));
  await footage.close();
  const page = await openApp(browser);
  try {
    await signIn(page);
    await nav(page, "Settings").click();
    const folderRoot = page.getByLabel("Only show folders under (in a browser tab)");
    const previousRoot = await folderRoot.inputValue();
    await folderRoot.fill(root);
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await expect(page.getByText("Saved.")).toBeVisible();

    await nav(page, "Project").click();
    await page.getByRole("button", { name: "Choose folder…" }).click();
    const dialog = page.getByRole("dialog", { name: "Choose a project folder" });
    await dialog.getByRole("button", { name: "oversize" }).click();
    await expect(dialog.getByLabel("Current folder")).toHaveText(/oversize$/);
    await dialog.getByRole("button", { name: "Use this folder" }).click();
    await page.getByRole("button", { name: "Dry run" }).click();
    const report = page.getByTestId("dry-run-report");
    await expect(report.getByRole("status")).toHaveText(/Too large to upload/, { timeout: 60_000 });
    await expect(report.getByText("footage/raw.bin")).toBeVisible();
    await expect(report.getByText(/Add footage\/ to \.svcignore/)).toBeVisible();
    await photograph(page, "project-oversize");

    await page.getByRole("button", { name: "Render", exact: true }).click();
    await page.getByRole("button", { name: "Show the queue" }).click();
    const queuedRender = page.getByRole("listitem", { name: "Queued render oversize" });
    await expect(queuedRender.getByTestId("queued-render-stage")).toHaveText("Failed", {
      timeout: 60_000,
    });
    await expect(queuedRender.getByRole("alert")).toContainText("over the 200 MiB upload limit");
    const stages = queuedRender.getByRole("list", { name: "Stages" });
    await expect(stages.getByText("Zipping")).toHaveAttribute("data-state", "failed");
    await expect(stages.getByText("Uploading")).toHaveAttribute("data-state", "todo");
    await expect(queuedRender.getByRole("button", { name: "Retry" })).toBeVisible();
    await photograph(page, "queue-failed");
    await queuedRender.getByRole("button", { name: "Remove from list" }).click();
    await expect(queuedRender).toHaveCount(0);

    await nav(page, "Settings").click();
    await folderRoot.fill(previousRoot);
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await expect(page.getByText("Saved.")).toBeVisible();
  } finally {
    await closePage(page);
    await rm(root, { recursive: true, force: true });
  }
});
