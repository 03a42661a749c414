// The render queue against the real service: resuming an interrupted upload under the same
// idempotency key, cancel and retry, the concurrency limit, and the ETA estimate.
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { BatchView, DesktopSettings, QueuedRenderView, MediaSource } from "../shared/ipc";
import { ApiClient } from "../core/api-client";
import { renderOnService } from "../core/pipeline";
import { startDesktopApp, type DesktopApp } from "./desktop-app";
import { createWebHost } from "./host";
import { writeJsonFileAtomic } from "../node/atomic-file";
import { EtaMeter } from "./queued-render-progress";
import {
  REPO,
  TINY_RENDER,
  startCountingProxy,
  startService,
  statusWithHost,
  tempDir,
  tinyComposition,
  writeProject,
  type TestService,
} from "./testing/support";
import { waitFor } from "../shared/testing/wait-for";

let base: string;
let service: TestService;
let client: ApiClient;
let app: DesktopApp | undefined;

beforeAll(async () => {
  base = await tempDir("svc-desktop-queue-");
  service = await startService(join(base, "service"));
  client = new ApiClient({ baseUrl: service.url, credential: service.apiKey });
});

afterEach(async () => {
  await app?.close();
  app = undefined;
});

afterAll(async () => {
  await service?.stop();
  await rm(base, { recursive: true, force: true });
});

async function openApp(
  name: string,
  settings: Partial<DesktopSettings> = {},
): Promise<{ app: DesktopApp; seen: QueuedRenderView[] }> {
  const seen: QueuedRenderView[] = [];
  app = await startDesktopApp({
    appRoot: REPO,
    version: "9.9.9",
    dataDir: join(base, name),
    env: { SVC_API_KEY: service.apiKey, HOME: base },
    home: base,
    host: createWebHost({ folderRoot: () => base, open: async () => false }),
    settingsDefaults: {
      service: service.url,
      downloadsDir: join(base, name, "downloads"),
      ...settings,
    },
    pollIntervalMs: 300,
  });
  app.events.subscribe((message) => {
    if (message.event === "queuedRender") seen.push(message.payload);
  });
  return { app, seen };
}

function finished(seen: QueuedRenderView[], queuedRenderId: string): QueuedRenderView | undefined {
  return seen.find(
    (queuedRender) =>
      queuedRender.id === queuedRenderId &&
      ["completed", "failed", "cancelled"].includes(queuedRender.status),
  );
}

it("resumes a queued render that was uploading with the same idempotency key: no second asset or render", async () => {
  const project = await writeProject(join(base, "resume-project"), {
    "index.html": tinyComposition("resume"),
  });
  const idempotencyKey = "svc-desktop:resume-test";
  // The previous run got through the upload and the submit, then died before writing either down.
  const earlier = await renderOnService(
    {
      client,
      project: { type: "dir", dir: project },
      composition: "index.html",
      ...TINY_RENDER,
      title: "resume",
      idempotencyKey,
      wait: false,
    },
    {},
  );
  const before = (await client.listRenders({ limit: 100 })).data.length;
  await writeJsonFileAtomic(join(base, "resume", "queue.json"), {
    version: 2,
    queuedRenders: [
      {
        id: "queued_render_resume",
        revision: 4,
        title: "resume",
        status: "running",
        stage: "upload",
        progress: 0.5,
        createdAt: Date.now(),
        startedAt: Date.now(),
        source: { type: "dir", dir: project, composition: "index.html" },
        settings: TINY_RENDER,
        outputDir: join(base, "resume", "downloads"),
        idempotencyKey,
        renderFailed: false,
      },
    ],
  });
  const { seen } = await openApp("resume");
  const done = await waitFor("the resumed queued render", () =>
    finished(seen, "queued_render_resume"),
  );
  expect(done.error).toBeUndefined();
  expect(done).toMatchObject({
    status: "completed",
    renderId: earlier.renderId,
    assetId: earlier.assetId,
  });
  expect(existsSync(done.outputPath!)).toBe(true);
  expect((await client.listRenders({ limit: 100 })).data.length).toBe(before);
});

it("cancels a running queued render on the service too (nothing charged), and a retry renders it anew", async () => {
  const project = await writeProject(join(base, "cancel-project"), {
    "index.html": tinyComposition("cancel"),
  });
  const { app, seen } = await openApp("cancel");
  const queuedRender = await app.queue.submit({ dir: project, settings: TINY_RENDER });
  const renderId = await waitFor(
    "a render id",
    () => seen.find((j) => j.id === queuedRender.id && j.renderId)?.renderId,
  );
  const cancelled = await app.queue.cancel(queuedRender.id);
  expect(cancelled).toMatchObject({ status: "cancelled", renderId, error: undefined });
  expect(app.queue.get(queuedRender.id).status).toBe("cancelled");
  expect(await client.getRender(renderId)).toMatchObject({
    status: "failed",
    failure_code: "cancelled",
    credits_charged: 0,
  });

  await app.queue.retry(queuedRender.id);
  const done = await waitFor("the retried queued render", () => {
    const current = app.queue.get(queuedRender.id);
    return current.status === "completed" || current.status === "failed" ? current : undefined;
  });
  expect(done.error).toBeUndefined();
  expect(done.status).toBe("completed");
  expect(done.renderId).not.toBe(renderId);
  expect(existsSync(done.outputPath!)).toBe(true);
});

it("a Cancel while the submit is on its way still cancels the render on the service once its answer names it", async () => {
  const project = await writeProject(join(base, "cancel-in-submit-project"), {
    "index.html": tinyComposition("cancel in submit"),
  });
  const proxy = await startCountingProxy();
  try {
    proxy.setUpstream(service.url);
    const held = proxy.holdNextSubmit();
    const { app } = await openApp("cancel-in-submit", { service: proxy.url });
    const queuedRender = await app.queue.submit({ dir: project, settings: TINY_RENDER });
    // The service has made the render; its answer has not reached the app yet.
    const renderId = (JSON.parse(await held.answered) as { data: { render_id: string } }).data
      .render_id;
    expect(app.queue.get(queuedRender.id).renderId).toBeUndefined();
    const cancelling = app.queue.cancel(queuedRender.id);
    held.release();
    const cancelled = await cancelling;
    expect(cancelled).toMatchObject({ status: "cancelled", renderId, error: undefined });
    expect(await client.getRender(renderId)).toMatchObject({
      status: "failed",
      failure_code: "cancelled",
      credits_charged: 0,
    });
  } finally {
    await proxy.close();
  }
});

it("runs at most `concurrency` queued renders at once and finishes them all", async () => {
  const { app, seen } = await openApp("concurrency", { concurrency: 2 });
  const projects = await Promise.all(
    ["one", "two", "three"].map((name) =>
      writeProject(join(base, `c-${name}`), { "index.html": tinyComposition(name) }),
    ),
  );
  let running = 0;
  let most = 0;
  const state = new Map<string, string>();
  app.events.subscribe((message) => {
    if (message.event !== "queuedRender") return;
    const before = state.get(message.payload.id);
    state.set(message.payload.id, message.payload.status);
    if (before !== "running" && message.payload.status === "running") running++;
    if (before === "running" && message.payload.status !== "running") running--;
    most = Math.max(most, running);
  });
  const queuedRenders: QueuedRenderView[] = [];
  for (const dir of projects)
    queuedRenders.push(await app.queue.submit({ dir, settings: TINY_RENDER }));
  const done = await waitFor(
    "all three queued renders",
    () => {
      const all = queuedRenders.map((queuedRender) => finished(seen, queuedRender.id));
      return all.every(Boolean) ? (all as QueuedRenderView[]) : undefined;
    },
    { timeoutMs: 120_000 },
  );
  expect(done.map((queuedRender) => queuedRender.status)).toEqual([
    "completed",
    "completed",
    "completed",
  ]);
  expect(most).toBe(2);
});

describe("ETA", () => {
  it("estimates the rest of a stage from the rate measured since it began", () => {
    let now = 0;
    const eta = new EtaMeter(() => now);
    expect(eta.estimate("rendering", 0)).toBeUndefined();
    now = 2_000;
    expect(eta.estimate("rendering", 0.25)).toBe(6);
    now = 4_000;
    expect(eta.estimate("rendering", 0.5)).toBe(4);
    expect(eta.estimate("download", 0.1)).toBeUndefined();
  });
});

it("renders an uploaded project again with new variables: it starts at queued and uploads nothing", async () => {
  const project = await writeProject(join(base, "again-project"), {
    "index.html": tinyComposition("first"),
  });
  const { app, seen } = await openApp("again");
  const first = await app.queue.submit({
    dir: project,
    settings: { ...TINY_RENDER, title: "again", variables: { title: "First" } },
  });
  const firstDone = await waitFor("the first queued render", () => finished(seen, first.id));
  expect(firstDone.status).toBe("completed");
  const assetId = firstDone.assetId!;
  expect(assetId).toMatch(/^asst_/);

  const again = await app.queue.submitFromAsset({
    assetId,
    composition: "index.html",
    settings: { ...TINY_RENDER, title: "again", variables: { title: "Second" } },
  });
  expect(again).toMatchObject({ stage: "queued", source: { type: "asset", assetId } });
  const againDone = await waitFor("the second queued render", () => finished(seen, again.id));
  expect(againDone.error).toBeUndefined();
  expect(againDone).toMatchObject({ status: "completed", assetId });
  expect(againDone.renderId).not.toBe(firstDone.renderId);
  expect(existsSync(againDone.outputPath!)).toBe(true);
  // Never zipped or uploaded: every update of the second queued render is at queued or later.
  const stages = seen
    .filter((queuedRender) => queuedRender.id === again.id)
    .map((queuedRender) => queuedRender.stage);
  expect(stages).not.toContain("zip");
  expect(stages).not.toContain("upload");
  const record = await client.getRender(againDone.renderId!);
  expect(record.status).toBe("completed");
});

it("renders a batch against one upload: rows checked again here, files named by the pattern, played from the media server", async () => {
  const project = await writeProject(join(base, "batch-project"), {
    "index.html": tinyComposition("batch"),
  });
  const { app } = await openApp("batch", { concurrency: 2 });
  const notifications: string[] = [];
  app.events.subscribe((message) => {
    if (message.event === "notification") notifications.push(message.payload.title);
  });
  const submit = (rows: Array<{ row: number; cells: Record<string, unknown> }>) =>
    app.router.invoke("batches.submit", {
      dir: project,
      settings: { ...TINY_RENDER, strictVariables: true },
      columns: ["title"],
      rows,
      outputPattern: "{title}-{row}",
    });
  // The renderer is not trusted: a row the grid would have marked is refused here too.
  const refused = await submit([
    { row: 1, cells: { title: "Ada" } },
    { row: 2, cells: { title: "a title far too long for it" } },
  ]);
  expect(refused).toMatchObject({ ok: false, error: { code: "batch_invalid" } });
  expect(!refused.ok && refused.error.message).toContain("row 2: title: is 27 characters long");

  const submitted = await submit([
    { row: 1, cells: { title: "Ada" } },
    { row: 3, cells: { title: "Alan" } },
  ]);
  if (!submitted.ok) throw new Error(submitted.error.message);
  const batch = submitted.data as BatchView;
  expect(batch).toMatchObject({ rowCount: 2, upload: { stage: "waiting" } });
  const rows = await waitFor("both rows to finish", () => {
    const queuedRenders = app.queue
      .list()
      .filter((queuedRender) => queuedRender.batch?.batchId === batch.id);
    return queuedRenders.length === 2 &&
      queuedRenders.every((queuedRender) => queuedRender.status === "completed")
      ? queuedRenders
      : undefined;
  });
  expect(rows.map((queuedRender) => queuedRender.outputPath).sort()).toEqual([
    join(batch.outputDir, "Ada-1.mp4"),
    join(batch.outputDir, "Alan-3.mp4"),
  ]);
  expect(new Set(rows.map((queuedRender) => queuedRender.assetId)).size).toBe(1);
  expect(app.queue.listBatches()[0]).toMatchObject({ upload: { stage: "done" } });
  await waitFor("the batch's one notification", () =>
    notifications.includes("Batch finished") ? true : undefined,
  );
  expect(notifications).toEqual(["Batch finished"]);

  // Inline playback: an unguessable URL on the media server, with Range requests for seeking.
  const played = await app.router.invoke("media.url", { queuedRenderId: rows[0]!.id });
  if (!played.ok) throw new Error(played.error.message);
  const media = played.data as MediaSource;
  expect(media).toMatchObject({ source: "file", poster: expect.stringMatching(/^http/) });
  const part = await fetch(media.url, { headers: { range: "bytes=0-99" } });
  expect(part.status).toBe(206);
  expect((await part.arrayBuffer()).byteLength).toBe(100);
  const guessed = media.url.replace(/\/media\/[\w-]+\//, "/media/guessed/");
  expect((await fetch(guessed)).status).toBe(404);
  expect(await statusWithHost(media.url, "evil.example:80")).toBe(403);
  // By render id (History), a video this app downloaded still plays from the file; once the file
  // is gone, from a fresh signed URL of the service.
  const byRender = await app.router.invoke("media.url", { renderId: rows[1]!.renderId! });
  expect(byRender).toMatchObject({ ok: true, data: { source: "file" } });
  await rm(rows[1]!.outputPath!);
  const signed = await app.router.invoke("media.url", { renderId: rows[1]!.renderId! });
  expect(signed).toMatchObject({ ok: true, data: { source: "service" } });
  if (signed.ok) expect((await fetch((signed.data as MediaSource).url)).status).toBe(200);
});

it("cancels a batch's remaining rows and retries them: they wait again, with nothing rendered twice", async () => {
  const project = await writeProject(join(base, "cancel-batch-project"), {
    "index.html": tinyComposition("cancel"),
  });
  // Concurrency 1 and the app not started: every row is still waiting when it is cancelled.
  const { app } = await openApp("cancel-batch", { concurrency: 1 });
  await app.queue.close();
  const batch = await app.queue.submitBatch({
    dir: project,
    composition: "index.html",
    settings: TINY_RENDER,
    rows: [1, 2, 3].map((row) => ({ row, values: { title: `T${row}` }, fileName: `T${row}.mp4` })),
    outputPattern: "{title}",
    title: "cancel-batch-project",
  });
  await app.queue.cancelBatch(batch.id);
  const rows = () =>
    app.queue.list().filter((queuedRender) => queuedRender.batch?.batchId === batch.id);
  expect(rows().map((queuedRender) => queuedRender.status)).toEqual([
    "cancelled",
    "cancelled",
    "cancelled",
  ]);
  await app.queue.retryFailedRows(batch.id);
  expect(rows().map((queuedRender) => queuedRender.status)).toEqual([
    "waiting",
    "waiting",
    "waiting",
  ]);
  expect(rows().every((queuedRender) => queuedRender.renderId === undefined)).toBe(true);
  await app.queue.removeBatch(batch.id);
  expect(rows()).toEqual([]);
  expect(app.queue.listBatches()).toEqual([]);
});

it("Cancel remaining stops a batch's rendering row on the service too, and leaves no row charged", async () => {
  const project = await writeProject(join(base, "stop-batch-project"), {
    "index.html": tinyComposition("stop").replace('data-duration="1"', 'data-duration="30"'),
  });
  const { app, seen } = await openApp("stop-batch", { concurrency: 1 });
  const before = (await client.me()).billing.credits_used;
  const batch = await app.queue.submitBatch({
    dir: project,
    composition: "index.html",
    settings: TINY_RENDER,
    rows: [1, 2].map((row) => ({ row, values: { title: `S${row}` }, fileName: `S${row}.mp4` })),
    outputPattern: "{title}",
    title: "stop-batch-project",
  });
  const renderId = await waitFor(
    "the first row's render",
    () =>
      seen.find((queuedRender) => queuedRender.batch?.batchId === batch.id && queuedRender.renderId)
        ?.renderId,
  );
  await app.queue.cancelBatch(batch.id);
  const rows = app.queue.list().filter((queuedRender) => queuedRender.batch?.batchId === batch.id);
  expect(rows.map((queuedRender) => queuedRender.status)).toEqual(["cancelled", "cancelled"]);
  expect(await client.getRender(renderId)).toMatchObject({
    status: "failed",
    failure_code: "cancelled",
  });
  // The waiting row never reached the service.
  expect(rows[1]!.renderId).toBeUndefined();
  expect((await client.me()).billing.credits_used).toBe(before);
});

it("saves every file of a render with several outputs beside the main one, plays each by its index, and Download again brings back a deleted one", async () => {
  const project = await writeProject(join(base, "outputs-project"), {
    "index.html": tinyComposition("outputs"),
  });
  const { app, seen } = await openApp("outputs");
  // Through the IPC router, as the renderer asks: the input is checked by the IPC schema.
  const invoke = async <T>(
    method: Parameters<DesktopApp["router"]["invoke"]>[0],
    input: unknown,
  ) => {
    const result = await app.router.invoke(method, input);
    if (!result.ok) throw new Error(result.error.message);
    return result.data as T;
  };
  const queuedRender = await invoke<QueuedRenderView>("queue.submit", {
    dir: project,
    settings: {
      ...TINY_RENDER,
      outputs: [
        { aspect_ratio: "16:9" },
        { aspect_ratio: "1:1" },
        { still: { time: 0.5, format: "png" }, aspect_ratio: "16:9" },
      ],
    },
  });
  const done = await waitFor("the render of three files", () => finished(seen, queuedRender.id));
  expect(done.error).toBeUndefined();
  expect(done.status).toBe("completed");
  const outputs = done.outputs!;
  expect(outputs.map((o) => [o.kind, o.format, o.width, o.height, o.time])).toEqual([
    ["video", "mp4", 1920, 1080, null],
    ["video", "mp4", 1080, 1080, null],
    ["still", "png", 1920, 1080, 0.5],
  ]);
  expect(outputs[0]!.path).toBe(done.outputPath);
  const stem = done.outputPath!.replace(/\.mp4$/, "");
  expect(outputs.slice(1).map((o) => o.path)).toEqual([`${stem}-1x1.mp4`, `${stem}-0.5s.png`]);
  for (const output of outputs) {
    expect(existsSync(output.path!)).toBe(true);
    expect(output.sizeBytes).toBeGreaterThan(0);
  }
  // Each file plays (or shows) from the disk, by its index, from the queued render and from History
  // alike.
  const poster = await invoke<MediaSource>("media.url", {
    queuedRenderId: queuedRender.id,
    output: 2,
  });
  expect(poster).toMatchObject({ source: "file", url: expect.stringMatching(/-0\.5s\.png$/) });
  const fetched = await fetch(poster.url);
  expect(fetched.headers.get("content-type")).toBe("image/png");
  const square = await invoke<MediaSource>("media.url", { renderId: done.renderId!, output: 1 });
  expect(square.url).toMatch(/-1x1\.mp4$/);
  // A file deleted since: the queued render says so, and "Download again" brings it back (other
  // files already there are not fetched again).
  await rm(outputs[1]!.path!);
  expect(app.queue.get(queuedRender.id).outputs![1]!.missing).toBe(true);
  seen.length = 0;
  await app.queue.redownload(queuedRender.id);
  const again = await waitFor("the download again", () => finished(seen, queuedRender.id));
  expect(again.status).toBe("completed");
  expect(again.outputs!.map((o) => o.missing)).toEqual([false, false, false]);
  expect(existsSync(outputs[1]!.path!)).toBe(true);
});
