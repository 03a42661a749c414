// History in real Chromium through web mode against a real `svc server`: "Render again" with new
// variables reuses the uploaded project (a second render, still one asset), "Open file" starts the
// system opener (here SVC_FILE_OPENER, a script that writes down what it was asked to open), and
// 500 renders in the service's database scroll in pages without breaking the layout.
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import type { Locator, Page } from "@playwright/test";
import { openSqliteDatabase } from "../src/server/db/sqlite";
import { newId } from "../src/server/ids";
import { RENDER_ID_PREFIX } from "../src/shared/api";
import { nav, openAppPage, openExample, photograph, SHOTS, signIn } from "./app-page";
import { appIpc, startWebApp, type WebApp } from "./desktop-web-app";
import { expect, test } from "./fixtures";

let app: WebApp;
let scratch: string;
let marker: string;
const pageErrors: string[] = [];

test.describe.configure({ mode: "serial" });
test.use({ actionTimeout: 15_000 });

test.beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-history-e2e-"));
  marker = join(scratch, "opened.txt");
  const opener = join(scratch, "opener.sh");
  await writeFile(opener, `#!/bin/sh\nprintf '%s' "$1" > '${marker}'\n`);
  await chmod(opener, 0o755);
  app = await startWebApp({ env: { SVC_FILE_OPENER: opener } });
});

test.afterAll(async () => {
  await app?.stop();
  await rm(scratch, { recursive: true, force: true });
});

test.afterEach(() => {
  expect(pageErrors).toEqual([]);
});

/** What the opener script was last asked to open (waits for a new answer). */
async function openedAfter(action: () => Promise<void>): Promise<string> {
  await rm(marker, { force: true });
  await action();
  let opened = "";
  await expect
    .poll(async () => (opened = await readFile(marker, "utf8").catch(() => "")))
    .not.toBe("");
  return opened;
}

function serviceDb(): BetterSqlite3.Database {
  return new BetterSqlite3(join(app.service.dataDir, "svc.db"), { readonly: true });
}

test("renders lower-third again from History with a new title: a second render, still one asset", async ({
  browser,
}) => {
  const page = await openAppPage(browser, app, pageErrors);
  await signIn(page, app);
  await openExample(page, "lower-third");
  await page.getByLabel("Frames per second").fill("2");
  await page.getByLabel("Quality").selectOption("draft");
  await page.getByRole("button", { name: "Render", exact: true }).click();
  await page.getByRole("button", { name: "Show the queue" }).click();
  const first = page.getByRole("listitem", { name: "Queued render lower-third" });
  await expect(first.getByTestId("queued-render-stage")).toHaveText("Done", { timeout: 150_000 });
  const firstOutput = (await first.getByTestId("queued-render-output").getAttribute("data-path"))!;

  // Open file hands the video to the system opener.
  expect(await openedAfter(() => first.getByRole("button", { name: "Open file" }).click())).toBe(
    firstOutput,
  );

  await nav(page, "History").click();
  const row = page.getByRole("listitem", { name: "Render lower-third" });
  await expect(row).toHaveCount(1);
  await row.getByRole("button", { name: "Render again…" }).click();
  const form = row.getByRole("form", { name: "Render again" });
  const submit = form.getByRole("button", { name: "Render with these values" });
  // The form comes from the variables the composition in the asset declares, prefilled with the
  // render's own values (none were changed, so the defaults), and validated as on Project.
  const name = form.getByRole("textbox", { name: "Name", exact: true });
  await expect(name).toHaveValue("Ada Lovelace");
  await expect(form.getByRole("combobox", { name: "Plate style" })).toHaveValue("dark");
  await form.getByRole("checkbox", { name: "Strict variables" }).check();
  const size = form.getByRole("spinbutton", { name: "Name size (px)" });
  await size.fill("400");
  await expect(form.getByRole("alert")).toContainText("Name size (px)");
  await expect(submit).toBeDisabled();
  await size.fill("72");
  await expect(form.getByRole("alert")).toHaveCount(0);
  await name.fill("Alan Turing");
  // The same values as JSON, which must parse before going back to the form.
  await form.getByRole("button", { name: "Edit as JSON" }).click();
  const editor = form.getByRole("textbox", { name: "Variables (JSON)" });
  await expect(editor).toHaveValue(JSON.stringify({ size: 72, title: "Alan Turing" }, null, 2));
  await editor.fill('{"title": "Alan Turing"');
  await expect(form.getByRole("alert")).toHaveText(/^Not valid JSON/);
  await expect(submit).toBeDisabled();
  await expect(form.getByRole("button", { name: "Edit as a form" })).toBeDisabled();
  await editor.fill("[1, 2]");
  await expect(form.getByRole("alert")).toHaveText(/Write one JSON object/);
  await editor.fill('{"title": "Alan Turing"}');
  await expect(form.getByRole("alert")).toHaveCount(0);
  await form.getByRole("button", { name: "Edit as a form" }).click();
  await expect(name).toHaveValue("Alan Turing");
  await expect(size).toHaveValue("64");
  await photograph(page, "history-render-again");
  await submit.click();
  await expect(form.getByRole("status")).toHaveText(/was added to the queue/);
  await form.getByRole("button", { name: "Show the queue" }).click();

  const queuedRenders = page.getByRole("listitem", { name: "Queued render lower-third" });
  await expect(queuedRenders).toHaveCount(2);
  const again = queuedRenders.first();
  // Nothing to zip or upload: the queued render's stages start at Queued.
  const stages = again.getByRole("list", { name: "Stages" }).getByRole("listitem");
  await expect(stages).toHaveText(["Queued", "Rendering", "Downloading"].map((s) => new RegExp(s)));
  await expect(again.getByTestId("queued-render-stage")).toHaveText("Done", { timeout: 150_000 });
  const secondOutput = (await again.getByTestId("queued-render-output").getAttribute("data-path"))!;
  expect(secondOutput).not.toBe(firstOutput);

  await nav(page, "History").click();
  await expect(row).toHaveCount(2);
  const db = serviceDb();
  try {
    expect(db.prepare("SELECT COUNT(*) AS n FROM assets").get()).toEqual({ n: 1 });
    const renders = db
      .prepare("SELECT asset_id, variables_json FROM renders ORDER BY created_ms")
      .all() as Array<{ asset_id: string; variables_json: string }>;
    expect(renders).toHaveLength(2);
    expect(renders[1]!.asset_id).toBe(renders[0]!.asset_id);
    expect(JSON.parse(renders[1]!.variables_json)).toEqual({ title: "Alan Turing" });
  } finally {
    db.close();
  }
  // The newest row is the second render; Open file there opens its video.
  expect(
    await openedAfter(() => row.first().getByRole("button", { name: "Open file" }).click()),
  ).toBe(secondOutput);
  await page.close();
});

/** 498 more rows like the two real renders, older, some failed, some with long titles. */
async function seedRenders(count: number): Promise<void> {
  const db = await openSqliteDatabase(join(app.service.dataDir, "svc.db"));
  try {
    const template = await db
      .selectFrom("renders")
      .selectAll()
      .where("status", "=", "completed")
      .orderBy("created_ms", "asc")
      .executeTakeFirstOrThrow();
    const rows = Array.from({ length: count }, (_, index) => {
      const failed = index % 9 === 4;
      return {
        ...template,
        id: newId(RENDER_ID_PREFIX),
        title:
          index % 25 === 3
            ? `A very long title for a lower third about the history of computing, part ${index}`
            : `Seeded render ${index + 1}`,
        created_ms: template.created_ms - (index + 1) * 60_000,
        ...(failed
          ? {
              status: "failed" as const,
              video_key: null,
              thumbnail_key: null,
              failure_code: "svc_render_failed",
              failure_message:
                "The composition did not become ready within 30 s: window.__timelines was never registered by the page's scripts",
              credits_charged_milli: 0,
            }
          : {}),
      };
    });
    for (let start = 0; start < rows.length; start += 100) {
      await db
        .insertInto("renders")
        .values(rows.slice(start, start + 100))
        .execute();
    }
  } finally {
    await db.destroy();
  }
}

/** Waits until the thumbnails in the window (lazy-loaded) have been fetched and decoded. */
async function thumbnailsLoaded(page: Page): Promise<void> {
  await expect
    .poll(() =>
      page.evaluate(() =>
        [...document.querySelectorAll<HTMLImageElement>(".thumb img")]
          .filter((img) => {
            const box = img.getBoundingClientRect();
            return box.bottom > 0 && box.top < window.innerHeight;
          })
          .every((img) => img.complete && img.naturalWidth > 0),
      ),
    )
    .toBe(true);
}

async function rowCount(page: Page): Promise<number> {
  return page.getByRole("list", { name: "Renders" }).getByRole("listitem").count();
}

test("what the service found in the page (missing images) shows under the queued render in Queue and the render in History, once each", async ({
  browser,
}) => {
  // Five missing images, one used twice and one with a very long name: five findings, the last
  // two folded away, the long name wrapped inside the row.
  const longName = `${"a-very-long-file-name-that-keeps-going-".repeat(4)}end.png`;
  const images = ["missing.png", "missing.png", "logo.svg", "photo.jpg", "backdrop.webp", longName];
  const project = join(scratch, "missing-images");
  await mkdir(project, { recursive: true });
  await writeFile(
    join(project, "index.html"),
    `<!doctype html><html><head><meta charset="utf-8"></head><body>
<div data-composition-id="main" data-width="1920" data-height="1080" data-duration="1"
 style="width:1920px;height:1080px;background:#246">
${images.map((src) => `<img src="${src}" alt="" style="width:10px">`).join("\n")}
</div></body></html>`,
  );
  const page = await openAppPage(browser, app, pageErrors);
  await signIn(page, app);
  await appIpc(app, "queue.submit", {
    dir: project,
    settings: { fps: 1, title: "Missing images" },
  });

  const shownOnce = async (where: Locator) => {
    const found = where.getByRole("region", { name: "Problems found in the page" });
    await expect(found.getByRole("heading")).toHaveText(
      "While rendering, the service found 5 problems in the page:",
    );
    // Three are shown; the rest open with "Show 2 more".
    await expect(found.getByRole("listitem")).toHaveCount(3);
    await found.getByText("Show 2 more").click();
    await expect(found.getByRole("listitem")).toHaveCount(5);
    const missing = found.getByRole("listitem").filter({ hasText: "missing.png" });
    await expect(missing).toHaveCount(1);
    await expect(missing).toContainText("could not be loaded");
    // The long name wraps: the row is no wider than the window.
    const box = await found.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(page.viewportSize()!.width);
  };

  await nav(page, "Queue").click();
  const queuedRender = page.getByRole("listitem", { name: "Queued render Missing images" });
  await expect(queuedRender.getByTestId("queued-render-stage")).toHaveText("Done", {
    timeout: 120_000,
  });
  await shownOnce(queuedRender);
  await queuedRender.scrollIntoViewIfNeeded();
  await photograph(page, "queue-page-warnings");

  await nav(page, "History").click();
  const row = page.getByRole("listitem", { name: "Render Missing images" });
  await expect(row.getByTestId("render-status")).toHaveText("Done");
  await shownOnce(row);
  await photograph(page, "history-page-warnings");
  // Deleted again: the next test counts the service's renders.
  await row.getByRole("button", { name: "Delete…" }).click();
  await row.getByRole("button", { name: "Yes, delete" }).click();
  await expect(row).toHaveCount(0);
  await page.close();
});

test("500 renders: History loads more as it scrolls, keeps its layout at 1024x700 and stays responsive", async ({
  browser,
}) => {
  await seedRenders(498);
  const page = await openAppPage(browser, app, pageErrors, { width: 1024, height: 700 });
  await signIn(page, app);
  await nav(page, "History").click();
  const list = page.getByRole("list", { name: "Renders" });
  await expect(list.getByRole("listitem")).toHaveCount(25);
  await thumbnailsLoaded(page);
  await page.screenshot({ path: join(SHOTS, "history-500-top-1024x700.png") });

  // Scrolling to the end of the list loads the next page, until the service has no more.
  let previous = 0;
  for (let round = 0; round < 30; round++) {
    const count = await rowCount(page);
    if (count >= 500) break;
    expect(count).toBeGreaterThan(previous);
    previous = count;
    await page.mouse.wheel(0, 100_000);
    await expect.poll(() => rowCount(page)).toBeGreaterThan(count);
  }
  await expect(list.getByRole("listitem")).toHaveCount(500);
  await expect(page.getByText("500 renders")).toBeVisible();

  // Nothing sticks out sideways, however long a title or failure message is.
  const overflow = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const wide = [...document.querySelectorAll(".render, .render *")].filter(
      (element) => element.getBoundingClientRect().right > width + 0.5,
    );
    return {
      scrollWidth: document.documentElement.scrollWidth,
      width,
      wide: wide.length,
    };
  });
  expect(overflow.wide).toBe(0);
  expect(overflow.scrollWidth).toBeLessThanOrEqual(overflow.width);

  // Still responsive with 500 rows: a click gets its answer on screen quickly.
  const last = list.getByRole("listitem").last();
  await last.scrollIntoViewIfNeeded();
  const started = Date.now();
  await last.getByRole("button", { name: "Delete…" }).click();
  await expect(last.getByRole("group", { name: "Confirm delete" })).toBeVisible();
  expect(Date.now() - started).toBeLessThan(1_000);
  await last.getByRole("button", { name: "Keep it" }).click();
  const switched = Date.now();
  await nav(page, "Queue").click();
  await expect(page.getByRole("heading", { name: "Queue" })).toBeVisible();
  await nav(page, "History").click();
  await expect(list.getByRole("listitem").first()).toBeVisible();
  expect(Date.now() - switched).toBeLessThan(3_000);

  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight / 2));
  await thumbnailsLoaded(page);
  await photograph(page, "history-500-1024x700", { fullPage: false });
  await page.close();
});
