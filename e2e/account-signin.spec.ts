// The desktop app's Account screen signing in through the browser and with a device code, in
// real Chromium through web mode against a real `svc server`: the app shows the sign-in link (web
// mode opens no browser), a second page signs in and allows access on the service's own pages,
// and the Account screen then shows who is signed in; sign-out; the same with a device code
// entered on /device; and a denied sign-in shown with the service's message and a hint.
// Screenshots at 1024x700 (the window's minimum), light and dark, into
// e2e/screenshots/account-signin-*.png.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, Page } from "@playwright/test";
import { addUserWithPassword } from "../src/server/testing/sign-in";
import { REPO, startWebApp, type WebApp } from "./desktop-web-app";
import { expect, test } from "./fixtures";

const SHOTS = join(REPO, "e2e", "screenshots");
const EMAIL = "hedy@example.com";
const PASSWORD = "frequency hopping";

let app: WebApp;
const pageErrors: string[] = [];

test.describe.configure({ mode: "serial" });
test.use({ actionTimeout: 15_000 });

test.beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  app = await startWebApp();
  await addUserWithPassword(app.service.dataDir, EMAIL, PASSWORD, 250);
});

test.afterAll(async () => {
  await app?.stop();
});

async function openAccount(browser: Browser): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1024, height: 700 } });
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(app.url);
  await expect(page.getByRole("heading", { name: "svc Desktop" })).toBeVisible();
  await page
    .getByRole("navigation", { name: "Screens" })
    .getByRole("button", { name: "Account" })
    .click();
  await expect(page.getByRole("heading", { name: /Signed in|Not signed in/ })).toBeVisible();
  return page;
}

async function photograph(page: Page, name: string): Promise<void> {
  for (const theme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: theme });
    await expect(page.locator("html")).toHaveAttribute("data-theme", theme);
    await page.screenshot({
      path: join(SHOTS, `account-signin-${name}-${theme}.png`),
      fullPage: true,
    });
  }
  await page.emulateMedia({ colorScheme: "light" });
}

async function signInOnServicePage(page: Page): Promise<void> {
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
}

async function expectSignedInAs(page: Page): Promise<void> {
  await expect(page.getByRole("heading", { name: "Signed in", exact: true })).toBeVisible();
  await expect(page.getByTestId("account-user")).toHaveText(`hedy · ${EMAIL}`);
  await expect(page.getByText("saved on this computer (a browser sign-in)")).toBeVisible();
  await expect(page.getByText("250 left")).toBeVisible();
}

test("signs in with the browser, signs out, then signs in with a device code", async ({
  browser,
}) => {
  const page = await openAccount(browser);
  await expect(page.getByRole("heading", { name: "Not signed in" })).toBeVisible();
  await photograph(page, "signed-out");

  // Browser: web mode cannot open one, so the app shows the sign-in page as a link.
  await page.getByRole("button", { name: "Sign in with browser" }).click();
  const waiting = page.getByRole("status", { name: "Browser sign-in" });
  await expect(waiting).toContainText("Open this link");
  const link = await page.getByTestId("sign-in-link").getAttribute("href");
  expect(link).toMatch(
    /^http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?.*code_challenge_method=S256/,
  );
  await photograph(page, "browser-waiting");
  const signInPage = await browser.newPage();
  await signInPage.goto(link!);
  await signInOnServicePage(signInPage);
  await signInPage.getByRole("button", { name: "Allow" }).click();
  await expect(signInPage.locator("h1")).toHaveText("Signed in to svc");
  await signInPage.close();
  await expectSignedInAs(page);
  await expect(waiting).toBeHidden();
  await photograph(page, "signed-in");

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page.getByRole("heading", { name: "Not signed in" })).toBeVisible();
  await expect(page.getByTestId("account-user")).toBeHidden();

  // Device code: entered on the service's /device page from "another device".
  await page.getByRole("button", { name: "Sign in with device code" }).click();
  const device = page.getByRole("status", { name: "Device sign-in" });
  await expect(device).toBeVisible();
  const userCode = (await page.getByTestId("device-code").textContent())!;
  expect(userCode).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
  const verification = await device.getByRole("link").textContent();
  expect(verification).toBe(`${app.service.url}/device`);
  await photograph(page, "device-waiting");
  const phone = await browser.newPage();
  await phone.goto(verification!);
  await signInOnServicePage(phone);
  await phone.getByLabel("Code").fill(userCode);
  await phone.getByRole("button", { name: "Continue" }).click();
  await phone.getByRole("button", { name: "Allow" }).click();
  await expect(phone.getByText("Device connected")).toBeVisible();
  await phone.close();
  await expectSignedInAs(page);
  await expect(device).toBeHidden();

  await page.close();
  expect(pageErrors).toEqual([]);
});

test("shows a denied browser sign-in with the service's reason and how to retry, and cancels", async ({
  browser,
}) => {
  const page = await openAccount(browser);
  if (await page.getByRole("button", { name: "Sign out" }).isVisible()) {
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page.getByRole("heading", { name: "Not signed in" })).toBeVisible();
  }
  await page.getByRole("button", { name: "Sign in with browser" }).click();
  const link = await page.getByTestId("sign-in-link").getAttribute("href");
  const signInPage = await browser.newPage();
  await signInPage.goto(link!);
  await signInOnServicePage(signInPage);
  await signInPage.getByRole("button", { name: "Deny" }).click();
  await signInPage.close();
  const failed = page.getByRole("alert").filter({ hasText: "Sign-in failed." });
  await expect(failed).toContainText("access_denied");
  await expect(failed).toContainText("Sign in again to retry");
  await expect(page.getByRole("heading", { name: "Not signed in" })).toBeVisible();
  await photograph(page, "denied");

  // A waiting device sign-in can be cancelled; the code disappears and nothing is signed in.
  await page.getByRole("button", { name: "Sign in with device code" }).click();
  await expect(page.getByTestId("device-code")).toBeVisible();
  await expect(failed).toBeHidden();
  await page.getByRole("button", { name: "Cancel sign-in" }).click();
  await expect(page.getByTestId("device-code")).toBeHidden();
  await expect(page.getByRole("heading", { name: "Not signed in" })).toBeVisible();

  await page.close();
  expect(pageErrors).toEqual([]);
});
