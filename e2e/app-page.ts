// What the desktop UI specs do to the app's page: open it (collecting uncaught page errors), go to
// a screen, sign in with the test service's key, open a project through the folder browser, and
// photograph a screen in both themes into e2e/screenshots/.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Locator, Page } from "@playwright/test";
import { expect } from "./fixtures";
import { REPO, type WebApp } from "./desktop-web-app";

export const SHOTS = join(REPO, "e2e", "screenshots");
export type ScreenName = "Project" | "Queue" | "History" | "Account" | "Settings";

export async function openAppPage(
  browser: Browser,
  app: WebApp,
  pageErrors: string[],
  viewport = { width: 1280, height: 860 },
): Promise<Page> {
  const page = await browser.newPage({ viewport });
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await page.goto(app.url);
  await expect(page.getByRole("heading", { name: "svc Desktop" })).toBeVisible();
  await expect(page.getByRole("status").filter({ hasText: /Connected to svc/ })).toHaveText(
    /Connected to svc \d+\.\d+\.\d+/,
  );
  return page;
}

export function nav(page: Page, screen: ScreenName) {
  return page.getByRole("navigation", { name: "Screens" }).getByRole("button", { name: screen });
}

/** <name>-light.png and <name>-dark.png (the app follows the emulated system theme). */
export async function photograph(
  page: Page,
  name: string,
  options: { fullPage?: boolean } = {},
): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  for (const theme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: theme });
    await expect(page.locator("html")).toHaveAttribute("data-theme", theme);
    await page.screenshot({
      path: join(SHOTS, `${name}-${theme}.png`),
      fullPage: options.fullPage ?? true,
    });
  }
  await page.emulateMedia({ colorScheme: "light" });
}

export async function signIn(page: Page, app: WebApp): Promise<void> {
  await nav(page, "Account").click();
  await expect(page.getByRole("heading", { name: /Signed in|Not signed in/ })).toBeVisible();
  if (await page.getByRole("heading", { name: "Signed in", exact: true }).isVisible()) return;
  await page.getByRole("textbox", { name: "Account key" }).fill(app.service.apiKey);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Signed in", exact: true })).toBeVisible();
}

/**
 * The folder browser reopens where it was: goes up until the repository's folders (with
 * "examples") are listed.
 */
export async function upToRepository(dialog: Locator): Promise<void> {
  const examples = dialog.getByRole("button", { name: "examples", exact: true });
  for (let step = 0; step < 8; step++) {
    await expect(dialog.getByLabel("Current folder")).not.toHaveText("…");
    await expect(dialog.getByRole("list", { name: "Folders" })).toBeVisible();
    if (await examples.isVisible()) return;
    await dialog.getByRole("button", { name: "Up one folder" }).click();
  }
}

/** Opens examples/<name> with the folder browser (rooted at the repository). */
export async function openExample(page: Page, name: string): Promise<void> {
  await nav(page, "Project").click();
  await page.getByRole("button", { name: "Choose folder…" }).click();
  const dialog = page.getByRole("dialog", { name: "Choose a project folder" });
  await upToRepository(dialog);
  await dialog.getByRole("button", { name: "examples" }).click();
  await expect(dialog.getByLabel("Current folder")).toHaveText(/examples$/);
  await dialog.getByRole("button", { name, exact: true }).click();
  await expect(dialog.getByLabel("Current folder")).toHaveText(new RegExp(`${name}$`));
  await dialog.getByRole("button", { name: "Use this folder" }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId("detected-size")).toBeVisible();
}
