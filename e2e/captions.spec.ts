// Captions in the app (issue 37), in real Chromium through web mode against a real `svc server`:
// a creator opens examples/hello-world, drops a subtitle file on the project, picks the Band look
// from its small previews, changes one word in the list (the preview shows the new word at once,
// without reloading), and renders. The video that arrives shows the captions as the preview did:
// the frame at the caption's time matches the preview's picture in the caption band (SSIM), and
// the Captions panel is photographed light and dark, with no programmer's words on it.
import { execFile } from "node:child_process";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { resolveFfmpeg } from "../src/engine/ffmpeg/ffmpeg";
import { openAppPage, openExample, photograph, signIn } from "./app-page";
import { startWebApp, type WebApp } from "./desktop-web-app";
import { expect, test } from "./fixtures";

const execFileAsync = promisify(execFile);
let app: WebApp;
const pageErrors: string[] = [];

test.describe.configure({ mode: "serial" });
test.use({ actionTimeout: 15_000 });

test.beforeAll(async () => {
  app = await startWebApp();
});

test.afterAll(async () => {
  await app?.stop();
});

const SRT = `1
00:00:00,000 --> 00:00:02,000
Welcome to the first video

2
00:00:02,000 --> 00:00:05,000
Thanks for watching
`;

test("drop subtitles on an example, pick a look, fix a word, render: the video shows it", async ({
  browser,
}) => {
  test.setTimeout(400_000);
  const page = await openAppPage(browser, app, pageErrors, { width: 1280, height: 1100 });
  await signIn(page, app);
  await openExample(page, "hello-world");
  await page.getByLabel("Frames per second").fill("2");
  await page.getByLabel("Quality").selectOption("draft");

  // Drop the file on the project, as from a file manager.
  const transfer = await page.evaluateHandle((text) => {
    const data = new DataTransfer();
    data.items.add(new File([text], "talk.srt", { type: "application/x-subrip" }));
    return data;
  }, SRT);
  await page.dispatchEvent(".project-screen", "drop", { dataTransfer: transfer });
  const panel = page.getByRole("region", { name: "Captions" });
  await expect(panel).toContainText("2 captions from talk.srt");

  // The small previews are the choice: a click on the Band one picks it.
  await panel.locator("label.caption-style", { hasText: "Band" }).click();
  await expect(panel.getByRole("radio", { name: /^Band/ })).toBeChecked();
  const frame = page.frameLocator("svc-player iframe");
  await expect(frame.locator("[data-svc-captions] .frame")).toHaveAttribute("data-style", "band");
  const player = page.locator("svc-player");
  const shoot = async (name: string) => {
    await player.evaluate((element) =>
      (element as HTMLElement & { seek(t: number): Promise<void> }).seek(1),
    );
    const file = test.info().outputPath(name);
    await writeFile(file, await page.locator("svc-player iframe").screenshot());
    return file;
  };
  await expect(frame.locator("[data-svc-captions] .cue")).toHaveText("Welcome to the first video");
  const before = await shoot("before.png");

  // The preview shows the new word at once (the player's frame draws the captions layer).
  await panel
    .getByRole("textbox", { name: "Caption 1 words" })
    .fill("Welcome to the WONDERFUL video");
  await expect(frame.locator("[data-svc-captions] .cue")).toHaveText(
    "Welcome to the WONDERFUL video",
  );
  const preview = await shoot("preview.png");
  await photograph(page, "captions-panel");
  // A broken file is refused with its line, in the panel.
  const broken = await page.evaluateHandle(() => {
    const data = new DataTransfer();
    data.items.add(new File(["1\n00:00:01,000 --> later\nHi\n"], "broken.srt"));
    return data;
  });
  await page.dispatchEvent(".project-screen", "drop", { dataTransfer: broken });
  await expect(panel.getByRole("alert")).toContainText("broken.srt cannot be used. Line 2:");
  await photograph(page, "captions-panel-error", { fullPage: false });
  const words = await panel.innerText();
  expect(words).not.toMatch(/(^|[\s(`'"])--[a-z]|\bsvc (render|cloud)\b|127\.0\.0\.1/m);
  // The edited captions are still the ones in use.
  await expect(panel.getByRole("textbox", { name: "Caption 1 words" })).toHaveValue(
    "Welcome to the WONDERFUL video",
  );

  await page.getByRole("button", { name: "Render", exact: true }).click();
  await page.getByRole("button", { name: "Show the queue" }).click();
  const queuedRender = page.getByRole("listitem", { name: /^Queued render hello-world/ });
  await expect(queuedRender.getByTestId("queued-render-stage")).toHaveText("Done", {
    timeout: 300_000,
  });

  const names = (await readdir(app.downloadsDir)).filter(
    (name) => name.endsWith(".mp4") && !name.startsWith("."),
  );
  expect(names).toHaveLength(1);
  const video = join(app.downloadsDir, names[0]!);
  const ffmpeg = (await resolveFfmpeg()).path;
  const rendered = test.info().outputPath("frame.png");
  // Frame 2 at 2 fps is 1 s, the time the preview showed.
  await execFileAsync(ffmpeg, [
    ...["-v", "error", "-y", "-i", video, "-vf", "select=eq(n\\,2)", "-frames:v", "1", rendered],
  ]);
  // The caption band of the render is the edited preview's, not the one before the edit.
  const band = "scale=1920:1080,crop=1920:200:0:820,format=yuv420p";
  const bandSsim = async (a: string, b: string) => {
    const { stderr } = await execFileAsync(ffmpeg, [
      ...["-hide_banner", "-i", a, "-i", b],
      ...["-lavfi", `[0:v]${band}[a];[1:v]${band}[b];[a][b]ssim`, "-f", "null", "-"],
    ]);
    return Number(/All:([\d.]+)/.exec(stderr)?.[1]);
  };
  const edited = await bandSsim(preview, rendered);
  const old = await bandSsim(before, rendered);
  console.log(`captions in the app: caption band SSIM edited ${edited}, before the edit ${old}`);
  expect(edited).toBeGreaterThan(0.9);
  expect(edited).toBeGreaterThan(old + 0.01);
  expect(pageErrors).toEqual([]);
});
