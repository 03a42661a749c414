// Issue 29, as a creator meets it in web mode against a real `svc server`: the folder browser
// (starts at home, goes up to the places, marks projects, reopens where it was; a folder with only
// badge.html opens with it; an empty folder says it holds no composition and stays out of Recent),
// choices remembered per project with "Reset to defaults", a frames-per-second field that refuses
// letters in words, Cancel that stops the render on the service (its record ends `cancelled`,
// nothing charged, History says "Cancelled"), and a text scan of the five screens for a
// programmer's words (a `--flag`, an `svc` command, a loopback URL). The app's home folder is a
// scratch folder, so the browser starts there as it would at a creator's home.
import { cp, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "@playwright/test";
import { nav, openAppPage, photograph, signIn } from "./app-page";
import { REPO, startWebApp, type WebApp } from "./desktop-web-app";
import { expect, test } from "./fixtures";

let app: WebApp;
let home: string;
const pageErrors: string[] = [];

test.describe.configure({ mode: "serial" });
test.use({ actionTimeout: 15_000 });

/** A 1920x1080 composition `seconds` long: a box sliding across. */
function composition(seconds: number, label: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><style>
  html, body { margin: 0; background: #102030; color: white; font: 64px sans-serif; }
  #box { position: absolute; top: 400px; left: 0; width: 200px; height: 200px; background: #e0a020;
         animation: slide ${seconds}s linear forwards; }
  @keyframes slide { from { transform: translateX(0); } to { transform: translateX(1500px); } }
</style></head><body>
  <div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="${seconds}">
    <div id="box"></div><p>${label}</p>
  </div></body></html>`;
}

test.beforeAll(async () => {
  home = await realpath(await mkdtemp(join(tmpdir(), "svc-creator-home-")));
  const projects = join(home, "Projects");
  await cp(join(REPO, "examples", "lower-third"), join(projects, "lower-third"), {
    recursive: true,
  });
  await mkdir(join(projects, "badge-only"), { recursive: true });
  await writeFile(join(projects, "badge-only", "badge.html"), composition(1, "Badge"));
  await mkdir(join(projects, "long-film"), { recursive: true });
  await writeFile(join(projects, "long-film", "index.html"), composition(60, "Long film"));
  await mkdir(join(projects, "empty"), { recursive: true });
  await mkdir(join(home, "Notes"), { recursive: true });
  // No folder limit in the settings: the default places (home and the user's own drives).
  app = await startWebApp({ env: { HOME: home }, settings: { folderBrowserRoot: undefined } });
});

test.afterAll(async () => {
  await app?.stop();
  await rm(home, { recursive: true, force: true });
});

test.afterEach(() => {
  expect(pageErrors).toEqual([]);
});

function browserDialog(page: Page) {
  return page.getByRole("dialog", { name: "Choose a project folder" });
}

async function chooseFolder(page: Page) {
  await nav(page, "Project").click();
  await page.getByRole("button", { name: "Choose folder…" }).click();
  const dialog = browserDialog(page);
  await expect(dialog.getByRole("list", { name: "Folders" })).toBeVisible();
  return dialog;
}

async function openProject(page: Page, name: string) {
  const dialog = await chooseFolder(page);
  const current = dialog.getByLabel("Current folder");
  const projects = join(home, "Projects");
  // It reopens where it was: up (or into Projects from home) until Projects is shown.
  for (let step = 0; step < 6; step++) {
    await expect(current).not.toHaveText("…");
    const shown = await current.textContent();
    if (shown === projects) break;
    if (shown === home) await dialog.getByRole("button", { name: "Projects" }).click();
    else await dialog.getByRole("button", { name: "Up one folder" }).click();
    await expect(current).not.toHaveText(shown!);
  }
  await dialog.getByRole("button", { name, exact: true }).click();
  await expect(current).toHaveText(join(home, "Projects", name));
  await dialog.getByRole("button", { name: "Use this folder" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId("detected-size")).toBeVisible();
}

async function me(): Promise<{ credits_used: number }> {
  const response = await fetch(`${app.service.url}/v3/users/me`, {
    headers: { authorization: `Bearer ${app.service.apiKey}` },
  });
  return ((await response.json()) as { data: { billing: { credits_used: number } } }).data.billing;
}

async function serviceRender(renderId: string) {
  const response = await fetch(`${app.service.url}/v3/svc/renders/${renderId}`, {
    headers: { authorization: `Bearer ${app.service.apiKey}` },
  });
  return ((await response.json()) as { data: Record<string, unknown> }).data;
}

test("the folder browser starts at home, goes up to the places, marks projects and reopens where it was", async ({
  browser,
}) => {
  const page = await openAppPage(browser, app, pageErrors);
  const dialog = await chooseFolder(page);
  const current = dialog.getByLabel("Current folder");
  await expect(current).toHaveText(home);
  // Up from home: the places, with why nothing else is shown.
  await dialog.getByRole("button", { name: "Up one folder" }).click();
  await expect(current).toHaveText("Your places");
  await expect(
    dialog.getByText(/shows only your home folder and the drives you own/),
  ).toBeVisible();
  await expect(dialog.getByRole("button", { name: "Use this folder" })).toBeDisabled();
  await expect(dialog.getByRole("button", { name: "Up one folder" })).toBeDisabled();
  await photograph(page, "folder-browser-places", { fullPage: false });
  await dialog.getByRole("button", { name: "Home", exact: true }).click();
  await expect(current).toHaveText(home);
  await dialog.getByRole("button", { name: "Projects" }).click();
  const folder = (name: string) => dialog.getByRole("button", { name, exact: true });
  await expect(folder("lower-third")).toHaveAttribute("data-project", "true");
  await expect(folder("badge-only")).toHaveAttribute("data-project", "true");
  await expect(folder("empty")).not.toHaveAttribute("data-project", "true");
  await photograph(page, "folder-browser-projects", { fullPage: false });

  // A project's HTML files are listed; a folder with only badge.html opens with it chosen.
  await folder("badge-only").click();
  await expect(dialog.getByRole("button", { name: "badge.html" })).toBeVisible();
  await dialog.getByRole("button", { name: "Use this folder" }).click();
  await expect(page.getByRole("combobox", { name: "Composition" })).toHaveValue("badge.html");
  await expect(page.getByTestId("detected-size")).toHaveText("1920×1080");

  // It reopens where it was.
  await page.getByRole("button", { name: "Choose folder…" }).click();
  await expect(current).toHaveText(join(home, "Projects", "badge-only"));
  await dialog.getByRole("button", { name: "Up one folder" }).click();
  await folder("empty").click();
  await expect(dialog.getByText("No folders or compositions in here.")).toBeVisible();
  await dialog.getByRole("button", { name: "Use this folder" }).click();
  await expect(page.getByText("No composition in this folder.")).toBeVisible();
  await expect(
    page.getByText(/empty holds no composition: there is no HTML file in/),
  ).toBeVisible();
  await photograph(page, "project-no-composition");
  // Only projects that opened are in Recent, by their folder's name (no path on a creator's screen).
  const recent = page.getByRole("combobox", { name: "Recent" });
  await expect(recent.locator("option")).toHaveText(["Recent projects…", "badge-only"]);
  await page.close();
});

test("a project reopens with its edited variables and options; Reset to defaults; fps refuses letters", async ({
  browser,
}) => {
  const page = await openAppPage(browser, app, pageErrors);
  await openProject(page, "lower-third");
  const name = page.getByLabel("Name", { exact: true });
  const fps = page.getByLabel("Frames per second");
  const quality = page.getByLabel("Quality");
  const render = page.getByRole("button", { name: "Render", exact: true });
  await name.fill("Grace Hopper");
  await fps.fill("3o");
  await expect(fps).toHaveValue("3o");
  await expect(page.getByRole("alert").filter({ hasText: "“3o” is not a number" })).toBeVisible();
  await expect(render).toBeDisabled();
  await expect(page.getByText("Fix Frames per second in Render options first.")).toBeVisible();
  await photograph(page, "project-fps-refused");
  await fps.fill("25");
  await expect(render).toBeEnabled();
  await quality.selectOption("high");

  // Another project starts from the defaults: nothing carries over.
  await openProject(page, "badge-only");
  await expect(fps).toHaveValue("30");
  await expect(quality).toHaveValue("standard");

  // Reopened, after a reload too: the edits are back.
  await page.reload();
  await page
    .getByRole("combobox", { name: "Recent" })
    .selectOption(join(home, "Projects", "lower-third"));
  await expect(name).toHaveValue("Grace Hopper");
  await expect(fps).toHaveValue("25");
  await expect(quality).toHaveValue("high");
  await photograph(page, "project-remembered");
  await page.getByRole("button", { name: "Reset to defaults" }).click();
  await expect(name).toHaveValue("Ada Lovelace");
  await page.getByRole("button", { name: "Default options" }).click();
  await expect(fps).toHaveValue("30");
  await expect(quality).toHaveValue("standard");
  await page.close();
});

test("Cancel stops the render on the service: it ends cancelled, nothing is charged, History says so", async ({
  browser,
}) => {
  const page = await openAppPage(browser, app, pageErrors);
  await signIn(page, app);
  const before = await me();
  await openProject(page, "long-film");
  await page.getByLabel("Frames per second").fill("10");
  await page.getByRole("button", { name: "Render", exact: true }).click();
  await nav(page, "Queue").click();
  const queuedRender = page.getByRole("listitem", { name: "Queued render long-film" });
  await expect(queuedRender.getByTestId("queued-render-stage")).toHaveText("Rendering", {
    timeout: 60_000,
  });
  // The only render of this service so far.
  const listed = (await fetch(`${app.service.url}/v3/svc/renders?limit=1`, {
    headers: { authorization: `Bearer ${app.service.apiKey}` },
  }).then((r) => r.json())) as { data: Array<{ render_id: string; status: string }> };
  const renderId = listed.data[0]!.render_id;
  expect(listed.data[0]!.status).toBe("rendering");
  const cancelledAt = Date.now();
  await queuedRender.getByRole("button", { name: "Cancel" }).click();
  await expect(queuedRender.getByTestId("queued-render-stage")).toHaveText("Cancelled");
  await expect
    .poll(async () => serviceRender(renderId), { timeout: 10_000 })
    .toMatchObject({ status: "failed", failure_code: "cancelled", credits_charged: 0 });
  console.warn(
    `app cancel: the service's record ended cancelled ${Date.now() - cancelledAt} ms after the click`,
  );
  expect(await me()).toEqual(before);
  await photograph(page, "queue-cancelled");

  await nav(page, "History").click();
  const row = page.locator(`[data-render-id="${renderId}"]`);
  await expect(row.getByTestId("render-status")).toHaveText("Cancelled");
  await expect(row.getByText("Cancelled before it finished; nothing was charged.")).toBeVisible();
  await expect(row).toContainText("0 credits");
  await photograph(page, "history-cancelled");
  await page.close();
});

test("no screen shows a command-line flag, an svc command, a loopback URL, a path or an HTML file", async ({
  browser,
}) => {
  const page = await openAppPage(browser, app, pageErrors);
  await signIn(page, app);
  await openProject(page, "lower-third");
  const findings: string[] = [];
  for (const screen of ["Project", "Queue", "History", "Account", "Settings"] as const) {
    await nav(page, screen).click();
    await expect(page.getByRole("heading", { level: 2 }).first()).toBeVisible();
    // What the creator sees: rendered text (a closed "For developers" is not rendered) and the
    // values of fields, except the service address the creator typed in Settings themselves.
    const text = await page.evaluate(() => {
      const values = [...document.querySelectorAll("input, select, textarea")]
        .filter((field) => (field as HTMLElement).offsetParent !== null)
        .filter((field) => field.getAttribute("type") !== "url")
        // A list shows its chosen option's words, not the value behind it.
        .map((field) =>
          field instanceof HTMLSelectElement
            ? (field.selectedOptions[0]?.text ?? "")
            : (field as HTMLInputElement).value,
        );
      return [document.body.innerText, ...values].join("\n");
    });
    for (const [what, pattern] of [
      ["a command-line flag", /(^|[\s(`'"])--[a-z]/m],
      ["an svc command", /\bsvc (cloud|render|server|auth|publish|check|doctor)\b/],
      ["a loopback URL", /http:\/\/127\.0\.0\.1/],
      // The project bar, the composition picker and image fields name folders, videos and
      // pictures, never their paths (those wait under "For developers"). Settings keeps the
      // downloads folder the creator chose, as a file manager shows it.
      ...(screen === "Project"
        ? ([
            ["a folder path", /(^|[\s"'(])\/(tmp|home|root|Users|var)\//m],
            ["an HTML file name", /\b[\w-]+\.html?\b/],
          ] as const)
        : []),
    ] as const) {
      const match = pattern.exec(text);
      if (match)
        findings.push(
          `${screen}: ${what}: …${text.slice(Math.max(0, match.index - 40), match.index + 40)}…`,
        );
    }
    await photograph(page, `scan-${screen.toLowerCase()}`);
  }
  expect(findings).toEqual([]);
  // The command is one click away for developers.
  await nav(page, "Project").click();
  await page
    .getByRole("region", { name: "Render", exact: true })
    .getByText("For developers")
    .click();
  await expect(page.getByLabel("CLI command")).toHaveText(/^svc cloud render /);
  await page.close();
});
