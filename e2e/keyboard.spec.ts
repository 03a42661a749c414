// The main path with the keyboard only (Tab, Shift+Tab, Enter, Space, arrows, typing), in real
// Chromium through web mode: move between screens, open examples/lower-third through the folder
// browser, edit a variable, run a dry run. Every control the path reaches shows where the focus
// is, and every control on every screen has an accessible name.
import type { Locator, Page } from "@playwright/test";
import { nav, openAppPage, signIn } from "./app-page";
import { startWebApp, type WebApp } from "./desktop-web-app";
import { expect, test } from "./fixtures";

let app: WebApp;
const pageErrors: string[] = [];

test.use({ actionTimeout: 15_000 });

test.beforeAll(async () => {
  app = await startWebApp();
});

test.afterAll(async () => {
  await app?.stop();
});

/** Whether the focused element (or the label around a visually hidden input) shows a focus ring. */
async function focusRingOf(page: Page): Promise<{ name: string; visible: boolean }> {
  return page.evaluate(() => {
    const active = document.activeElement;
    // Inside <svc-player> the player styles its own focus (src/player, tested there).
    if (active?.tagName.toLowerCase() === "svc-player" && active.shadowRoot?.activeElement)
      return { name: "(player)", visible: true };
    if (!active) return { name: "(nothing)", visible: false };
    const ringed = (element: Element | null) => {
      if (!element) return false;
      const style = getComputedStyle(element);
      return (
        (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0) ||
        style.boxShadow !== "none"
      );
    };
    return {
      name: `${active.tagName.toLowerCase()} ${active.getAttribute("aria-label") ?? active.textContent?.trim().slice(0, 40) ?? ""}`,
      visible: ringed(active) || ringed(active.closest("label")),
    };
  });
}

/** Presses Tab (or Shift+Tab) until `target` has the focus, checking each stop shows it. */
async function tabTo(page: Page, target: Locator, options: { back?: boolean } = {}) {
  for (let presses = 0; presses < 80; presses++) {
    if (await target.evaluate((element) => element === document.activeElement).catch(() => false))
      return;
    await page.keyboard.press(options.back ? "Shift+Tab" : "Tab");
    const ring = await focusRingOf(page);
    if (ring.name !== "(nothing)" && !ring.name.startsWith("body"))
      expect(ring.visible, `focus ring on ${ring.name}`).toBe(true);
  }
  throw new Error(`Tab never reached ${String(target)}`);
}

/** Lines of the accessibility tree naming a control without an accessible name. */
async function unnamedControls(page: Page): Promise<string[]> {
  const tree = await page.locator("body").ariaSnapshot();
  // The tree names controls as `- button "Name"`; make sure that is what is being read.
  expect(tree).toMatch(/^\s*- button "[^"]+"/m);
  return tree
    .split("\n")
    .filter((line) =>
      /^\s*- (button|textbox|combobox|checkbox|spinbutton|slider|link|radio|searchbox|listbox)(:|\s*$|\s\[)/.test(
        line,
      ),
    );
}

test("the main path works with the keyboard alone, and every control has a name", async ({
  browser,
}) => {
  const page = await openAppPage(browser, app, pageErrors);
  // Signing in is not part of this path; do it first so History has something to show.
  await signIn(page, app);
  await nav(page, "Project").click();
  await page.locator("body").click({ position: { x: 5, y: 5 } });

  // Screens: the navigation is reachable and works with Enter and Space.
  for (const [screen, heading, key] of [
    ["Queue", "Queue", "Enter"],
    ["History", "History", "Space"],
    ["Settings", "Settings", "Enter"],
    ["Account", /Signed in|Not signed in/, "Enter"],
  ] as const) {
    await tabTo(page, nav(page, screen));
    await page.keyboard.press(key);
    await expect(page.getByRole("heading", { name: heading }).first()).toBeVisible();
    expect(await unnamedControls(page), `unnamed controls on ${screen}`).toEqual([]);
  }
  await tabTo(page, nav(page, "Project"), { back: true });
  await page.keyboard.press("Enter");
  await expect(page.getByRole("heading", { name: "Open a project to start" })).toBeVisible();

  // The folder browser: open it, walk into examples/lower-third, use it.
  await tabTo(page, page.getByRole("button", { name: "Choose folder…" }));
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog", { name: "Choose a project folder" });
  await expect(dialog).toBeVisible();
  expect(await unnamedControls(page)).toEqual([]);
  await tabTo(page, dialog.getByRole("button", { name: "examples" }));
  await page.keyboard.press("Enter");
  await expect(dialog.getByLabel("Current folder")).toHaveText(/examples$/);
  await tabTo(page, dialog.getByRole("button", { name: "lower-third" }));
  await page.keyboard.press("Space");
  await expect(dialog.getByLabel("Current folder")).toHaveText(/lower-third$/);
  await tabTo(page, dialog.getByRole("button", { name: "Use this folder" }));
  await page.keyboard.press("Enter");
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId("detected-size")).toHaveText("1920×1080");

  // Edit the title (typing), and the name size with the arrow keys.
  const title = page.getByLabel("Name", { exact: true });
  await tabTo(page, title);
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.type("Keyboard Hero");
  await expect(title).toHaveValue("Keyboard Hero");
  await expect(page.frameLocator("svc-player iframe").getByText("Keyboard Hero")).toBeVisible();
  const size = page.getByLabel("Name size (px)");
  await tabTo(page, size);
  await page.keyboard.press("ArrowUp");
  await expect(size).toHaveValue("68");
  // The image variable's chooser and the strict toggle are reachable too.
  await tabTo(page, page.getByRole("button", { name: "Choose… for Logo" }));
  await tabTo(page, page.getByRole("checkbox", { name: "Strict" }), { back: true });
  expect(await unnamedControls(page), "unnamed controls on Project").toEqual([]);

  // The dry run.
  await tabTo(page, page.getByRole("button", { name: "Dry run" }));
  await page.keyboard.press("Enter");
  const report = page.getByTestId("dry-run-report");
  await expect(report.getByRole("cell", { name: "index.html" })).toBeVisible();
  await expect(report.getByRole("status")).toHaveText(/files/);

  // Recent projects: the select is reachable and picks a project with the arrow keys.
  const recent = page.getByRole("combobox", { name: "Recent" });
  await tabTo(page, recent, { back: true });
  await expect(recent.locator("option")).toHaveCount(2);

  await page.close();
  expect(pageErrors).toEqual([]);
});
