// "Render many…" in real Chromium through web mode against a real `svc server`: a 12-row CSV for
// examples/lower-third with two bad rows, marked in the grid and blocking (strict); one fixed, one
// dropped; 11 videos rendered against ONE upload, named by the pattern, with a title that differs
// frame to frame between rows; the app killed mid-batch and started again finishes it without
// rendering any row twice. Short renders (1 fps, draft) keep it within the suite's budget.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import type { Page } from "@playwright/test";
import { resolveFfmpeg } from "../src/engine/ffmpeg/ffmpeg";
import { nav, openAppPage, openExample, photograph, signIn } from "./app-page";
import { REPO, startWebApp, type WebApp } from "./desktop-web-app";
import { expect, test } from "./fixtures";

const SPEAKERS = join(REPO, "e2e", "data", "lower-third-speakers.csv");

let app: WebApp;
const pageErrors: string[] = [];

test.describe.configure({ mode: "serial" });
test.use({ actionTimeout: 15_000 });

test.beforeAll(async () => {
  // Three rows in flight keep the service's queue fed while finished ones download.
  app = await startWebApp({ settings: { concurrency: 3 } });
});

test.afterAll(async () => {
  await app?.stop();
});

test.afterEach(() => {
  expect(pageErrors).toEqual([]);
});

/** What the service's database holds: assets, and the title each render was given. */
function serviceRecords(): { assets: number; titles: string[] } {
  const db = new BetterSqlite3(join(app.service.dataDir, "svc.db"), { readonly: true });
  try {
    const { n } = db.prepare("SELECT COUNT(*) AS n FROM assets").get() as { n: number };
    const renders = db.prepare("SELECT variables_json FROM renders").all() as Array<{
      variables_json: string;
    }>;
    return {
      assets: n,
      titles: renders.map((r) => (JSON.parse(r.variables_json) as { title: string }).title),
    };
  } finally {
    db.close();
  }
}

/** The name plate (y 780..890 from x 100) of the frame at 2 s, decoded to gray pixels. */
async function titlePixels(file: string): Promise<string> {
  const ffmpeg = await resolveFfmpeg();
  const result = spawnSync(
    ffmpeg.path,
    ["-v", "error", "-ss", "2", "-i", file, "-frames:v", "1"].concat([
      "-vf",
      "crop=1000:110:100:780",
      "-f",
      "rawvideo",
      "-pix_fmt",
      "gray",
      "-",
    ]),
    { maxBuffer: 16 * 1024 * 1024 },
  );
  expect(result.status, result.stderr.toString()).toBe(0);
  expect(result.stdout.length).toBe(1000 * 110);
  return createHash("sha256").update(result.stdout).digest("hex");
}

function counts(page: Page, label: "done" | "rendering" | "queued" | "failed") {
  return page.getByTestId(`count-${label}`);
}

test("Render many: an empty panel, a table that cannot be read, and 300 rows in a grid that scrolls inside the page", async ({
  browser,
}) => {
  const page = await openAppPage(browser, app, pageErrors, { width: 1024, height: 760 });
  await openExample(page, "lower-third");
  await page.getByRole("button", { name: "Render many…" }).click();
  const panel = page.getByRole("region", { name: "Render many" });
  await expect(panel.getByText("No table yet")).toBeVisible();
  await photograph(page, "batch-empty", { fullPage: false });

  await panel.getByText("Or paste a table").click();
  const pasted = panel.getByRole("textbox", { name: /^Table/ });
  await pasted.fill('title,size\n"Grace Hopper,72\n');
  await panel.getByRole("button", { name: "Use this table" }).click();
  await expect(panel.getByRole("alert")).toContainText(
    "pasted table: The CSV has an unclosed quote",
  );
  await photograph(page, "batch-unreadable", { fullPage: false });

  const rows = Array.from(
    { length: 300 },
    (_, i) =>
      `Speaker number ${i + 1} with a longer name,${40 + (i % 15) * 4},${i % 7 === 3 ? "neon" : "dark"}`,
  );
  await pasted.fill(["title,size,style", ...rows].join("\n"));
  await panel.getByRole("button", { name: "Use this table" }).click();
  const grid = panel.getByRole("table", { name: "Batch rows" });
  await expect(grid.getByRole("row")).toHaveCount(301);
  await expect(panel.getByRole("status")).toContainText("300 rows to render · 43 rows to fix");
  // The grid scrolls inside its frame; nothing sticks out of the page sideways.
  const overflow = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    grid: document.querySelector(".batch-grid-wrap")!.getBoundingClientRect().height,
  }));
  expect(overflow.page).toBeLessThanOrEqual(0);
  expect(overflow.grid).toBeLessThanOrEqual(461);
  await grid.getByRole("row", { name: "Row 4", exact: true }).scrollIntoViewIfNeeded();
  await photograph(page, "batch-grid-300-rows", { fullPage: false });
  await page
    .getByRole("region", { name: "Render many" })
    .getByRole("button", { name: "Close" })
    .click();
  await page.close();
});

test("a 12-row CSV for lower-third: bad rows marked and blocking, 11 rendered against one upload, restart mid-batch renders no row twice", async ({
  browser,
}) => {
  test.setTimeout(900_000);
  let page = await openAppPage(browser, app, pageErrors, { width: 1280, height: 900 });
  await signIn(page, app);
  await openExample(page, "lower-third");
  await page.getByLabel("Frames per second").fill("1");
  await page.getByLabel("Quality").selectOption("draft");
  await page.getByRole("button", { name: "Render many…" }).click();
  const panel = page.getByRole("region", { name: "Render many" });
  await expect(panel.getByText("No table yet")).toBeVisible();
  await panel.getByLabel("Table file").setInputFiles(SPEAKERS);

  const grid = panel.getByRole("table", { name: "Batch rows" });
  const row = (n: number) => grid.getByRole("row", { name: `Row ${n}`, exact: true });
  await expect(grid.getByRole("row")).toHaveCount(13);
  for (const n of [4, 9]) await expect(row(n)).toHaveAttribute("data-state", "blocked");
  for (const n of [1, 2, 3, 5, 6, 7, 8, 10, 11, 12])
    await expect(row(n)).toHaveAttribute("data-state", "ready");
  const size4 = row(4).getByRole("textbox", { name: "Name size (px) of row 4" });
  await expect(size4).toHaveAttribute("aria-invalid", "true");
  await expect(row(4)).toContainText("400 is above max 96");
  await expect(row(9).getByRole("textbox", { name: "Accent colour of row 9" })).toHaveAttribute(
    "aria-invalid",
    "true",
  );
  // Strict variables is on: the two rows block the batch.
  await expect(panel.getByRole("checkbox", { name: "Strict variables" })).toBeChecked();
  const renderMany = panel.getByRole("button", { name: /^Render \d+ videos?$/ });
  await expect(renderMany).toHaveText("Render 12 videos");
  await expect(renderMany).toBeDisabled();
  await expect(panel.getByText("Fix or drop the 2 rows marked in the table first.")).toBeVisible();
  await expect(panel.getByRole("status")).toContainText(
    "12 rows to render · 2 rows to fix · about 48 credits in all (4 credits each)",
  );
  await expect(row(1)).toContainText("Grace Hopper-1.mp4");
  await photograph(page, "batch-grid");

  // Fix one, drop the other.
  await size4.fill("72");
  await expect(row(4)).toHaveAttribute("data-state", "ready");
  await panel.getByRole("button", { name: "Drop row 9" }).click();
  await expect(row(9)).toHaveAttribute("data-state", "dropped");
  await expect(renderMany).toHaveText("Render 11 videos");
  await expect(renderMany).toBeEnabled();
  await renderMany.click();
  await panel.getByRole("button", { name: "Show the queue" }).click();

  let card = page.getByRole("listitem", { name: "Batch lower-third" });
  await expect(card).toContainText("lower-third · 11 videos");
  const folder = (await card.getByTestId("batch-folder").textContent())!.trim();
  // Mid-way: some rows done, some still to go. Then the app is killed and started again.
  await expect
    .poll(async () => Number((await counts(page, "done").textContent())?.split(" ")[0]), {
      timeout: 400_000,
    })
    .toBeGreaterThanOrEqual(3);
  await expect(counts(page, "queued")).not.toHaveText("0 queued");
  await photograph(page, "batch-card-midway");
  await page.close();
  await app.restartApp();

  page = await openAppPage(browser, app, pageErrors, { width: 1280, height: 900 });
  await nav(page, "Queue").click();
  card = page.getByRole("listitem", { name: "Batch lower-third" });
  await expect(card).toBeVisible();
  await expect(counts(page, "done")).toHaveText("11 done", { timeout: 600_000 });
  await expect(counts(page, "failed")).toHaveText("0 failed");
  await expect(card.getByRole("list", { name: "Rows" }).getByRole("listitem")).toHaveCount(11);

  // 11 files named by the pattern ({title}-{row}); the dropped row 9 has none.
  const lines = (await readFile(SPEAKERS, "utf8")).trim().split("\n").slice(1);
  const expected = lines
    .map((line, index) => ({ title: line.split(",")[0]!, row: index + 1 }))
    .filter(({ row: n }) => n !== 9)
    .map(({ title, row: n }) => `${title}-${n}.mp4`);
  expect((await readdir(folder)).sort()).toEqual([...expected].sort());

  // One upload, one render per row, each row's title once: nothing rendered twice.
  const records = serviceRecords();
  expect(records.assets).toBe(1);
  expect(records.titles).toHaveLength(11);
  expect(new Set(records.titles).size).toBe(11);

  // The title decoded from each video differs row to row.
  const hashes = await Promise.all(expected.map((name) => titlePixels(join(folder, name))));
  expect(new Set(hashes).size).toBe(11);
  await page.close();
});

/** An SRT of one caption over the whole 4 s of lower-third. */
const srt = (words: string) => `1\n00:00:00,000 --> 00:00:04,000\n${words}\n`;

test("captions in the batch table: a subtitle file and a look per row, checked in the grid, each video rendered with its own", async ({
  browser,
}) => {
  test.setTimeout(600_000);
  const files = test.info().outputPath("subtitles");
  await mkdir(files, { recursive: true });
  const file = async (name: string, text: string) => {
    await writeFile(join(files, name), text);
    return join(files, name);
  };
  const ada = await file("ada.srt", srt("Ada speaks first"));
  const bo = await file("bo.vtt", `WEBVTT\n\n00:00.000 --> 00:04.000\nBo answers\n`);
  const broken = await file("broken.srt", "1\n00:00:00,000 --> 00:00:xx\nNo\n");
  const cy = await file("cy.srt", srt("Cy closes the show"));

  const page = await openAppPage(browser, app, pageErrors, { width: 1280, height: 900 });
  await signIn(page, app);
  await openExample(page, "lower-third");
  await page.getByLabel("Frames per second").fill("1");
  await page.getByLabel("Quality").selectOption("draft");
  await page.getByRole("button", { name: "Render many…" }).click();
  const panel = page.getByRole("region", { name: "Render many" });
  await panel.getByText("Or paste a table").click();
  await panel
    .getByRole("textbox", { name: /^Table/ })
    .fill("title,caption_style\nAda Lovelace,\nBo Peep,band\nCy Young,fancy\n");
  await panel.getByRole("button", { name: "Use this table" }).click();
  const grid = panel.getByRole("table", { name: "Batch rows" });
  const row = (n: number) => grid.getByRole("row", { name: `Row ${n}`, exact: true });
  await expect(grid.getByRole("row")).toHaveCount(4);
  // The two caption columns are the table's own, not "not a variable" ones.
  await expect(panel.getByText("Not variables of this composition")).toBeHidden();
  await expect(grid.getByRole("columnheader", { name: "Captions" })).toBeVisible();
  // A look that is not one blocks its row until one is picked.
  await expect(row(3)).toHaveAttribute("data-state", "blocked");
  await expect(row(3)).toContainText('"fancy" is not a caption style');
  await expect(row(2).getByRole("combobox", { name: "Caption look of row 2" })).toHaveValue("band");
  await row(3).getByRole("combobox", { name: "Caption look of row 3" }).selectOption("social");
  await expect(row(3)).toHaveAttribute("data-state", "ready");

  // A file per row; a broken one is marked with its line and blocks the row until replaced.
  await row(1).getByLabel("Caption file of row 1").setInputFiles(ada);
  await row(2).getByLabel("Caption file of row 2").setInputFiles(bo);
  await row(3).getByLabel("Caption file of row 3").setInputFiles(broken);
  await expect(row(3)).toHaveAttribute("data-state", "blocked");
  await expect(row(3)).toContainText("Line 2");
  const renderMany = panel.getByRole("button", { name: /^Render \d+ videos?$/ });
  await expect(renderMany).toBeDisabled();
  await row(3).getByLabel("Caption file of row 3").setInputFiles(cy);
  await expect(row(3)).toHaveAttribute("data-state", "ready");
  await expect(page.getByTestId("captions-1")).toHaveText("ada.srt");
  await expect(page.getByTestId("captions-2")).toHaveText("bo.vtt");
  await expect(page.getByTestId("captions-3")).toHaveText("cy.srt");
  // Creators' words: file names, never the folder they came from.
  const shown = await panel.evaluate((element) =>
    [
      (element as HTMLElement).innerText,
      ...[...element.querySelectorAll("input, select")].map((f) => (f as HTMLInputElement).value),
    ].join("\n"),
  );
  expect(shown).not.toContain(files);
  expect(shown).not.toMatch(/\/tmp\/|C:\\/);
  await row(2).scrollIntoViewIfNeeded();
  await photograph(page, "batch-captions-grid", { fullPage: false });

  await expect(renderMany).toHaveText("Render 3 videos");
  await renderMany.click();
  await panel.getByRole("button", { name: "Show the queue" }).click();
  // The earlier test's batch of the same project may be on the queue too.
  const card = page
    .getByRole("listitem", { name: "Batch lower-third" })
    .filter({ hasText: "lower-third · 3 videos" });
  await expect(card.getByTestId("count-done")).toHaveText("3 done", { timeout: 500_000 });
  await expect(card.getByTestId("count-failed")).toHaveText("0 failed");

  // Each row's render asked the service for its own words and look.
  const db = new BetterSqlite3(join(app.service.dataDir, "svc.db"), { readonly: true });
  const captions = new Map<string, { style: string; text: string[] }>();
  try {
    for (const render of db
      .prepare("SELECT variables_json, captions_json FROM renders WHERE captions_json IS NOT NULL")
      .all() as Array<{ variables_json: string; captions_json: string }>) {
      const parsed = JSON.parse(render.captions_json) as {
        style: string;
        cues: Array<{ text: string }>;
      };
      captions.set((JSON.parse(render.variables_json) as { title: string }).title, {
        style: parsed.style,
        text: parsed.cues.map((cue) => cue.text),
      });
    }
  } finally {
    db.close();
  }
  expect(Object.fromEntries(captions)).toEqual({
    "Ada Lovelace": { style: "clean", text: ["Ada speaks first"] },
    "Bo Peep": { style: "band", text: ["Bo answers"] },
    "Cy Young": { style: "social", text: ["Cy closes the show"] },
  });

  // One video per row, named by the pattern.
  const folder = (await card.getByTestId("batch-folder").textContent())!.trim();
  const names = (await readdir(folder)).sort();
  expect(names).toEqual(["Ada Lovelace-1.mp4", "Bo Peep-2.mp4", "Cy Young-3.mp4"]);
  await page.close();
});
