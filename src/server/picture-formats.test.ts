// gif and png-sequence through the real service: the request's `format`, the stored file's media
// type, its frames, and a charge that follows the one billing rule as for a video.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import yauzl from "yauzl";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeMedia } from "../engine/testing/probe";
import { creditsFor } from "../shared/credits";
import {
  api,
  runCli,
  startService,
  tempDir,
  uploadProject,
  waitForTerminalRender,
  type ServiceProcess,
} from "./testing/service-process";
import { buildZip, compositionHtml } from "./testing/zip-builder";

let svc: ServiceProcess;
let dir: string;
let assetId: string;

beforeAll(async () => {
  dir = await tempDir();
  svc = await startService({ dataDir: join(dir, "data"), jobs: 1 });
  const zip = buildZip([
    { name: "index.html", data: compositionHtml({ seconds: 1 }), deflate: true },
  ]);
  assetId = (await uploadProject(svc, svc.apiKey, zip)).assetId;
});

afterAll(async () => {
  await svc?.kill();
});

const submit = (body: Record<string, unknown>) =>
  api(svc, "POST", "/v3/svc/renders", {
    key: svc.apiKey,
    body: { project: { type: "asset_id", asset_id: assetId }, ...body },
  });

function zipNames(file: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      const names: string[] = [];
      zip.on("entry", (entry: yauzl.Entry) => {
        names.push(entry.fileName);
        zip.readEntry();
      });
      zip.on("end", () => resolve(names));
      zip.on("error", reject);
      zip.readEntry();
    });
  });
}

describe("picture formats on the service", () => {
  it("renders a gif and a png-sequence, served as image/gif and application/zip, charged like video", async () => {
    const gif = await submit({ format: "gif", fps: 5, quality: "draft" });
    const pngs = await submit({ format: "png-sequence", fps: 5, quality: "draft" });
    expect([gif.status, pngs.status]).toEqual([201, 201]);

    const gifRecord = await waitForTerminalRender(svc, gif.body.data.render_id);
    expect(gifRecord).toMatchObject({ status: "completed", format: "gif", duration: 1 });
    expect(gifRecord.credits_charged).toBe(creditsFor(1, "1080p"));
    const gifResponse = await fetch(gifRecord.video_url);
    expect(gifResponse.headers.get("content-type")).toBe("image/gif");
    const gifFile = join(dir, "out.gif");
    await writeFile(gifFile, Buffer.from(await gifResponse.arrayBuffer()));
    const gifInfo = await probeMedia(gifFile, { countFrames: true });
    expect(gifInfo.streams[0]).toMatchObject({
      codec: "gif",
      width: 1920,
      height: 1080,
      frames: 5,
    });

    const pngRecord = await waitForTerminalRender(svc, pngs.body.data.render_id);
    expect(pngRecord).toMatchObject({ status: "completed", format: "png-sequence" });
    expect(pngRecord.credits_charged).toBe(creditsFor(1, "1080p"));
    const zipResponse = await fetch(pngRecord.video_url);
    expect(zipResponse.headers.get("content-type")).toBe("application/zip");
    const zipFile = join(dir, "out.zip");
    await writeFile(zipFile, Buffer.from(await zipResponse.arrayBuffer()));
    expect(await zipNames(zipFile)).toEqual([0, 1, 2, 3, 4].map((i) => `frame_0000${i}.png`));
    expect((await fetch(pngRecord.thumbnail_url)).status).toBe(200);

    // The quote for the same settings is the charge, and now draws on these renders' cost.
    for (const record of [gifRecord, pngRecord]) {
      const quote = await api(svc, "POST", "/v3/svc/renders/quote", {
        key: svc.apiKey,
        body: { duration: record.duration, fps: 5, format: record.format },
      });
      expect(quote.status).toBe(200);
      expect(quote.body.data).toMatchObject({
        frames: 5,
        credits: record.credits_charged,
        cost_source: "recent_renders",
        queue: { queued: 0, rendering: 0, workers: 1 },
      });
      expect(quote.body.data.estimated_render_seconds).toBeGreaterThan(0);
    }
  });

  it("quotes credits by the charge rule for every format and resolution, and uses a measured cost", async () => {
    for (const [body, credits] of [
      [{ duration: 2.2, fps: 30, format: "mp4", resolution: "4k" }, creditsFor(2.2, "4k")],
      [{ duration: 2.2, fps: 30, format: "gif" }, creditsFor(2.2, "1080p")],
      [{ duration: 0.4, fps: 10, format: "png-sequence" }, creditsFor(0.4, "1080p")],
      [{ duration: 61, fps: 24, format: "webm" }, creditsFor(61, "1080p")],
    ] as const) {
      const quote = await api(svc, "POST", "/v3/svc/renders/quote", { key: svc.apiKey, body });
      expect(quote.body.data.credits, JSON.stringify(body)).toBe(credits);
    }
    const measured = await api(svc, "POST", "/v3/svc/renders/quote", {
      key: svc.apiKey,
      body: { duration: 10, fps: 30, measured_ms_per_frame: 100, measured_startup_ms: 2000 },
    });
    expect(measured.body.data).toMatchObject({ frames: 300, cost_source: "measured" });
    // 2 s start-up + 300 frames x 100 ms x (1 + encoding) + the finish: more than 32 s.
    expect(measured.body.data.estimated_render_seconds).toBeGreaterThan(32);
  });

  it("refuses a gif above 50 fps or at 4k with 400 invalid_parameter naming the field", async () => {
    expect((await submit({ format: "gif", fps: 60 })).body.error).toMatchObject({
      code: "invalid_parameter",
      param: "fps",
    });
    for (const format of ["gif", "png-sequence"]) {
      expect((await submit({ format, resolution: "4k" })).body.error).toMatchObject({
        code: "invalid_parameter",
        param: "format",
      });
    }
  });

  it("svc cloud render --quote samples the project here, asks the service, and uploads nothing", async () => {
    const project = join(dir, "quote-project");
    await mkdir(project, { recursive: true });
    await writeFile(join(project, "index.html"), compositionHtml({ seconds: 1 }));
    const before = await api(svc, "GET", "/v3/svc/renders?limit=100", { key: svc.apiKey });
    const run = await runCli(["cloud", "render", project, "--quote", "--json", "--fps", "10"], {
      SVC_API_URL: svc.url,
      SVC_API_KEY: svc.apiKey,
    });
    expect(run.code, run.stderr).toBe(0);
    const printed = JSON.parse(run.stdout);
    expect(printed.quote).toMatchObject({
      frames: 10,
      credits: creditsFor(1, "1080p"),
      cost_source: "measured",
    });
    expect(printed.local.estimated_seconds).toBeGreaterThan(0);
    const after = await api(svc, "GET", "/v3/svc/renders?limit=100", { key: svc.apiKey });
    expect(after.body.data.length).toBe(before.body.data.length);
  });
});
