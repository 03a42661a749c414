// The IPC contract, run as one suite over both transports against the same real services: the
// Electron half (preload bridge <-> an in-process fake of ipcMain/ipcRenderer, since the Electron
// binary is not available here) and web mode (real HTTP and WebSocket). A real render service runs
// as a child process and the queued renders are real (1 s at 2 fps).
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  IPC_METHOD_NAMES,
  type DesktopApi,
  type IpcEventMessage,
  type QueuedRenderNotification,
  type QueuedRenderStage,
  type QueuedRenderView,
} from "../shared/ipc";
import { CredentialStore } from "../core/credentials";
import { creditsFor } from "../shared/credits";
import { createDesktopBridge, type IpcRendererLike } from "../preload/bridge";
import { apiFromBridge, createWebBridge, type EventSocket } from "../renderer/transport";
import { startDesktopApp, type DesktopApp } from "./desktop-app";
import { createWebHost } from "./host";
import { connectIpcMain, type IpcInvokeEventLike, type IpcMainLike } from "./ipc-main";
import type { IpcRouter } from "./ipc-router";
import {
  ipcFailure,
  REPO,
  TINY_RENDER,
  recordingOpener,
  startService,
  statusWithHost,
  tempDir,
  tinyComposition,
  writeProject,
  type TestService,
} from "./testing/support";
import { startWebServer, type WebServer } from "./web-server";
import { waitFor } from "../shared/testing/wait-for";

interface Transport {
  api: DesktopApi;
  /** Resolves when events sent from now on will be seen. */
  ready(): Promise<void>;
  close(): void;
}

const APP_PAGE = "file:///app/out/renderer/index.html";

/** Electron's two IPC halves in one process; arguments are structured-cloned as Electron does. */
function electronTransport(router: IpcRouter, senderUrl = APP_PAGE): Transport {
  const handlers = new Map<string, (event: IpcInvokeEventLike, ...args: unknown[]) => unknown>();
  const rendererListeners = new Map<string, Set<(event: unknown, ...args: unknown[]) => void>>();
  const ipcMain: IpcMainLike = {
    handle: (channel, listener) => void handlers.set(channel, listener),
    removeHandler: (channel) => void handlers.delete(channel),
  };
  const webContents = {
    send(channel: string, ...args: unknown[]) {
      const cloned = structuredClone(args);
      for (const listener of rendererListeners.get(channel) ?? []) listener({}, ...cloned);
    },
  };
  const disconnect = connectIpcMain(ipcMain, router, {
    isTrustedSender: (url) => url === APP_PAGE,
    target: () => webContents,
  });
  const ipcRenderer: IpcRendererLike = {
    invoke: async (channel, ...args) => {
      const handler = handlers.get(channel);
      if (!handler) throw new Error(`No handler registered for '${channel}'`);
      return structuredClone(
        await handler({ senderFrame: { url: senderUrl } }, ...structuredClone(args)),
      );
    },
    on: (channel, listener) => {
      const set = rendererListeners.get(channel) ?? new Set();
      set.add(listener);
      rendererListeners.set(channel, set);
    },
    removeListener: (channel, listener) => rendererListeners.get(channel)?.delete(listener),
  };
  return {
    api: apiFromBridge(createDesktopBridge(ipcRenderer)),
    ready: async () => {},
    close: disconnect,
  };
}

function webTransport(server: WebServer): Transport {
  const bridge = createWebBridge({
    baseUrl: server.origin,
    token: server.token,
    openSocket: (url, protocols) =>
      new WebSocket(url, protocols, { origin: server.origin }) as unknown as EventSocket,
  });
  return {
    api: apiFromBridge(bridge),
    ready: () => bridge.whenConnected(),
    close: () => bridge.close(),
  };
}

const STAGE_ORDER: QueuedRenderStage[] = [
  "waiting",
  "zip",
  "upload",
  "queued",
  "rendering",
  "download",
];

let base: string;
let home: string;
let project: string;
let service: TestService;
let app: DesktopApp;
let web: WebServer;
const opener = recordingOpener();
const serverEvents: IpcEventMessage[] = [];

beforeAll(async () => {
  base = await tempDir();
  home = join(base, "home");
  project = await writeProject(join(home, "projects", "hello"), {
    "index.html": tinyComposition("hello"),
    "scenes/outro.html": tinyComposition("outro"),
    "media/notes.txt": "x".repeat(5000),
  });
  await writeProject(join(base, "outside"), { "secret.txt": "not for the preview" });
  service = await startService(join(base, "service"));
  const configDir = join(base, "config");
  await new CredentialStore(configDir).saveApiKey(service.apiKey);
  app = await startDesktopApp({
    appRoot: REPO,
    version: "9.9.9",
    dataDir: join(base, "app"),
    env: { SVC_CONFIG_DIR: configDir, HOME: home },
    home,
    host: createWebHost({ folderRoot: () => home, open: opener.open }),
    settingsDefaults: { service: service.url, downloadsDir: join(base, "downloads") },
    pollIntervalMs: 300,
  });
  app.events.subscribe((message) => serverEvents.push(message));
  web = await startWebServer({ version: "9.9.9", router: app.router });
});

afterAll(async () => {
  await web?.close();
  await app?.close();
  await service?.stop();
  await rm(base, { recursive: true, force: true });
});

it("carries every method of the contract across the Electron bridge to its handler", async () => {
  const transport = electronTransport(app.router);
  for (const method of IPC_METHOD_NAMES) {
    // An input no schema accepts: the answer proves the call crossed the bridge under its own
    // name and reached the main process's schema for that method, without running it.
    const call = transport.api[method] as (input: unknown) => Promise<unknown>;
    const failure = await ipcFailure(call(42));
    expect({ method, code: failure.code }).toEqual({ method, code: "invalid_input" });
  }
  transport.close();
});

it("refuses IPC from a page that is not the app's own", async () => {
  const transport = electronTransport(app.router, "https://evil.example/");
  expect((await ipcFailure(transport.api["app.info"]())).code).toBe("forbidden_sender");
  transport.close();
});

describe.each([
  ["Electron IPC", () => electronTransport(app.router)],
  ["web mode", () => webTransport(web)],
])("over %s", (name, makeTransport) => {
  let transport: Transport;
  let api: DesktopApi;
  /** A timestamp's local day, as output file names spell it. */
  function localDay(ms: number): string {
    const d = new Date(ms);
    const pad = (n: number) => String(n).padStart(2, "0");
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
  }

  let queuedRender: QueuedRenderView;

  beforeAll(() => {
    transport = makeTransport();
    api = transport.api;
  });
  afterAll(() => transport.close());

  it("answers app.info", async () => {
    expect(await api["app.info"]()).toEqual({ app: "svc Desktop", version: "9.9.9" });
  });

  it("scans a project: entry, size, variables and the HTML files to pick from", async () => {
    const scan = await api["project.scan"]({ dir: project });
    expect(scan).toMatchObject({
      composition: "index.html",
      width: 1920,
      height: 1080,
      aspectRatio: "16:9",
      duration: 1,
    });
    expect(scan.variables.map((v) => v.id)).toEqual(["title"]);
    expect(scan.compositions).toEqual(["index.html", "scenes/outro.html"]);
  });

  it("keeps the core's error codes: a folder without a composition, an unknown queued render, bad input", async () => {
    const empty = await ipcFailure(api["project.scan"]({ dir: join(base, "outside") }));
    expect(empty.code).toBe("no_composition");
    expect(empty.message).toBe(
      `outside holds no composition: there is no HTML file in ${join(base, "outside")}.`,
    );
    expect(empty.hint).toMatch(/^Choose another folder with Choose folder…/);
    const missing = await ipcFailure(api["queue.cancel"]({ queuedRenderId: "queued_render_nope" }));
    expect(missing).toMatchObject({ code: "queued_render_not_found", hint: "Refresh the queue." });
    const invalid = await ipcFailure(api["settings.set"]({ concurrency: 0 }));
    expect(invalid.code).toBe("invalid_input");
    expect(invalid.message).toMatch(/^concurrency:/);
    expect((await ipcFailure(api["host.openExternal"]({ url: "file:///etc/passwd" }))).code).toBe(
      "invalid_input",
    );
  });

  it("reports the dry run: files, size and the largest files", async () => {
    const report = await api["project.dryRun"]({ dir: project });
    expect(report.file_count).toBe(3);
    expect(report.exceeds_upload_limit).toBe(false);
    expect(report.largest_files[0]).toEqual({ path: "media/notes.txt", size_bytes: 5000 });
  });

  it("serves a preview of the composition and nothing outside the project", async () => {
    const { url } = await api["project.previewUrl"]({
      dir: project,
      composition: "scenes/outro.html",
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/scenes\/outro\.html$/);
    expect(await (await fetch(url)).text()).toContain("outro");
    const origin = new URL(url).origin;
    expect((await fetch(`${origin}/..%2F..%2F..%2Foutside%2Fsecret.txt`)).status).toBe(404);
    expect((await fetch(`${origin}/media/notes.txt`, { method: "POST" })).status).toBe(405);
    expect(await statusWithHost(url, `evil.example:${new URL(url).port}`)).toBe(403);
  });

  it("validates variables against the composition's schema", async () => {
    const { issues, resolved } = await api["variables.validate"]({
      dir: project,
      values: { title: 5, extra: true },
    });
    expect(issues.map((issue) => `${issue.id}:${issue.code}`)).toEqual([
      "title:type-mismatch",
      "extra:undeclared",
    ]);
    expect(resolved).toMatchObject({ title: 5, extra: true });
  });

  it("gets and sets settings, keeping what was not changed", async () => {
    const before = await api["settings.get"]();
    const after = await api["settings.set"]({ concurrency: 3 });
    expect(after).toEqual({ ...before, concurrency: 3 });
    expect(await api["settings.get"]()).toEqual(after);
    await api["settings.set"]({ concurrency: before.concurrency });
  });

  it("quotes a render from the service: frames and credits by the charge rule, nothing spent", async () => {
    const quote = await api["renders.quote"]({
      durationSeconds: 2.5,
      fps: 10,
      format: "gif",
      resolution: "1080p",
    });
    expect(quote).toMatchObject({ frames: 25, credits: creditsFor(2.5, "1080p") });
    expect(quote.estimated_total_seconds).toBeGreaterThan(0);
    expect(
      (await ipcFailure(api["renders.quote"]({ durationSeconds: 2, fps: 60, format: "gif" }))).code,
    ).toBe("invalid_input");
  });

  it("estimates a render on this computer from sampled frames, rendering nothing", async () => {
    const quote = await api["project.quote"]({
      dir: project,
      settings: { fps: 10, quality: "draft", format: "mp4", resolution: "1080p" },
    });
    expect(quote).toMatchObject({
      frames: 10,
      duration_seconds: 1,
      credits: creditsFor(1, "1080p"),
    });
    expect(quote.estimated_seconds).toBeGreaterThan(0);
  });

  it("reports the service it talks to", async () => {
    expect(await api["service.state"]()).toMatchObject({
      mode: "remote",
      status: "remote",
      url: service.url,
    });
  });

  it("signs out, refuses a wrong key, signs in with the right one, and never returns the key", async () => {
    const status = await api["auth.status"]();
    expect(status).toMatchObject({ signedIn: true, source: "credentials-file", kind: "api_key" });
    expect(status.user?.email).toBeTruthy();
    expect(status.credits?.remaining).toBeGreaterThan(0);
    expect(JSON.stringify(status)).not.toContain(service.apiKey);
    expect((await api["auth.logout"]()).signedIn).toBe(false);
    expect(
      (
        await ipcFailure(
          api["auth.login"]({ method: "api-key", apiKey: "svc_key_wrongwrongwrong" }),
        )
      ).code,
    ).toBe("authentication_failed");
    const signedIn = await api["auth.login"]({ method: "api-key", apiKey: service.apiKey });
    expect(signedIn.signedIn).toBe(true);
    expect(JSON.stringify(signedIn)).not.toContain(service.apiKey);
  });

  it("browses folders under the home folder only, and opens links in the system browser", async () => {
    expect(await api["host.pickFolder"]()).toEqual({ kind: "browse", root: home });
    const top = await api["host.listFolders"]({});
    expect(top.folders.map((f) => f.name)).toEqual(["projects"]);
    expect(top.path).toBe(home);
    // Up from home: the list of places (home; this machine's drives are not the test's).
    expect(top.parent).toBe("");
    const places = await api["host.listFolders"]({ places: true });
    expect(places.path).toBeUndefined();
    expect(places.folders[0]).toEqual({ name: "Home", path: home, project: false });
    expect(places.limit).toMatch(/only your home folder and the drives you own/);
    const inner = await api["host.listFolders"]({ path: join(home, "projects") });
    expect(inner.folders).toEqual([{ name: "hello", path: project, project: true }]);
    expect((await api["host.listFolders"]({ path: project })).htmlFiles).toEqual(["index.html"]);
    expect((await ipcFailure(api["host.listFolders"]({ path: base }))).code).toBe(
      "folder_outside_root",
    );
    expect(await api["host.openExternal"]({ url: "https://example.com/docs" })).toEqual({
      opened: true,
    });
    expect(opener.opened).toContain("https://example.com/docs");
  });

  it("renders a queued render, pushing its stages in order, and notifies when it is done", async () => {
    const received: QueuedRenderView[] = [];
    const notifications: QueuedRenderNotification[] = [];
    const offQueuedRender = api.on("queuedRender", (update) => received.push(update));
    const offNote = api.on("notification", (note) => notifications.push(note));
    await transport.ready();
    queuedRender = await api["queue.submit"]({
      dir: project,
      settings: { ...TINY_RENDER, title: `Contract ${name}` },
    });
    expect(queuedRender).toMatchObject({
      status: "waiting",
      stage: "waiting",
      source: { type: "dir", dir: project },
    });
    const done = await waitFor("the queued render to complete", () =>
      received.find(
        (update) =>
          update.id === queuedRender.id &&
          (update.status === "completed" || update.status === "failed"),
      ),
    );
    expect(done.error).toBeUndefined();
    expect(done.status).toBe("completed");
    await waitFor("the notification", () =>
      notifications.find((n) => n.queuedRenderId === queuedRender.id),
    );
    offQueuedRender();
    offNote();

    // Every event the main process emitted for the queued render arrived, once, in the order
    // emitted.
    const emitted = serverEvents
      .flatMap((m) => (m.event === "queuedRender" ? [m.payload] : []))
      .filter((update) => update.id === queuedRender.id);
    const mine = received.filter((update) => update.id === queuedRender.id);
    expect(mine.map((u) => u.revision)).toEqual(emitted.map((u) => u.revision));
    expect(JSON.parse(JSON.stringify(mine))).toEqual(JSON.parse(JSON.stringify(emitted)));
    const stages = mine.map((u) => STAGE_ORDER.indexOf(u.stage));
    expect(stages).toEqual([...stages].sort((a, b) => a - b));
    expect(mine.some((u) => u.stage === "upload")).toBe(true);
    expect(mine.some((u) => u.stage === "download")).toBe(true);

    expect(done.renderId).toMatch(/^rndr_/);
    // Named from the queued render's title and the day, never the render's id.
    expect(done.outputPath).toBe(
      join(base, "downloads", `Contract ${name} ${localDay(done.createdAt)}.mp4`),
    );
    expect(existsSync(done.outputPath!)).toBe(true);
    expect(done.fileMissing).toBe(false);
    queuedRender = done;
  });

  it("lists the queued render; cancel and retry of a finished queued render are refused with their codes", async () => {
    const queuedRenders = await api["queue.list"]();
    expect(queuedRenders.find((j) => j.id === queuedRender.id)).toMatchObject({
      status: "completed",
      renderId: queuedRender.renderId,
    });
    expect((await ipcFailure(api["queue.cancel"]({ queuedRenderId: queuedRender.id }))).code).toBe(
      "queued_render_finished",
    );
    expect((await ipcFailure(api["queue.retry"]({ queuedRenderId: queuedRender.id }))).code).toBe(
      "queued_render_not_retryable",
    );
  });

  it('shows "file missing" when the video was deleted, and downloads it again', async () => {
    await rm(queuedRender.outputPath!);
    const missing = (await api["queue.list"]()).find((j) => j.id === queuedRender.id)!;
    expect(missing).toMatchObject({ status: "completed", fileMissing: true });
    expect(
      (await ipcFailure(api["host.revealFile"]({ queuedRenderId: queuedRender.id }))).code,
    ).toBe("file_missing");
    await api["queue.redownload"]({ queuedRenderId: queuedRender.id });
    const again = await waitFor("the re-download", async () => {
      const current = (await api["queue.list"]()).find((j) => j.id === queuedRender.id)!;
      return current.status === "completed" || current.status === "failed" ? current : undefined;
    });
    expect(again).toMatchObject({
      status: "completed",
      fileMissing: false,
      outputPath: queuedRender.outputPath,
      renderId: queuedRender.renderId,
    });
    expect(existsSync(queuedRender.outputPath!)).toBe(true);
    expect(await api["host.revealFile"]({ queuedRenderId: queuedRender.id })).toEqual({
      shown: true,
    });
    expect(opener.opened).toContain(dirname(queuedRender.outputPath!));
    // Only files of the app's own queued renders can be shown.
    expect(
      (await ipcFailure(api["host.revealFile"]({ queuedRenderId: "queued_render_unknown" }))).code,
    ).toBe("queued_render_not_found");
  });

  it("lists, gets, downloads again from history and deletes server renders", async () => {
    const page = await api["renders.list"]({ limit: 100 });
    expect(page.data.map((r) => r.render_id)).toContain(queuedRender.renderId);
    const record = await api["renders.get"]({ renderId: queuedRender.renderId! });
    expect(record).toMatchObject({ render_id: queuedRender.renderId, status: "completed", fps: 2 });
    // What the render's composition declares, read from its asset by the service.
    const declared = await api["renders.variables"]({ render: record });
    expect(declared.variables).toMatchObject([{ id: "title", type: "string", maxLength: 20 }]);
    expect(declared.schemaErrors).toEqual([]);
    const unknown = { ...record, asset_id: "asset_unknown" };
    expect((await ipcFailure(api["renders.variables"]({ render: unknown }))).code).toBe(
      "svc_asset_not_found",
    );

    const outputDir = join(base, `history-${name.replace(/ /g, "-")}`);
    const download = await api["renders.download"]({ renderId: queuedRender.renderId!, outputDir });
    const downloaded = await waitFor("the history download", async () => {
      const current = (await api["queue.list"]()).find((j) => j.id === download.id)!;
      return current.status === "completed" || current.status === "failed" ? current : undefined;
    });
    expect(downloaded.status).toBe("completed");
    expect(dirname(downloaded.outputPath!)).toBe(outputDir);
    expect(existsSync(downloaded.outputPath!)).toBe(true);
    expect(await api["queue.remove"]({ queuedRenderId: download.id })).toEqual({
      queuedRenderId: download.id,
    });

    expect(await api["renders.delete"]({ renderId: queuedRender.renderId! })).toEqual({
      renderId: queuedRender.renderId,
    });
    expect((await ipcFailure(api["renders.get"]({ renderId: queuedRender.renderId! }))).code).toBe(
      "svc_render_not_found",
    );
  });
});
