// The embedded service is supervised: started on first need, and restarted on the same port when it
// dies, with the queue carrying on. The service is the real `svc server` child process; the queued
// render manager and supervisor run in this process.
import { existsSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { QueuedRenderView, ServiceState } from "../shared/ipc";
import { ApiClient } from "../core/api-client";
import { startDesktopApp, type DesktopApp } from "./desktop-app";
import { createWebHost } from "./host";
import { REPO, TINY_RENDER, tempDir, tinyComposition, writeProject } from "./testing/support";
import { waitFor } from "../shared/testing/wait-for";

let base: string;
let app: DesktopApp;

beforeAll(async () => {
  base = await tempDir("svc-desktop-supervisor-");
});

afterAll(async () => {
  await app?.close();
  await rm(base, { recursive: true, force: true });
});

it("restarts the embedded service after it is killed, and queued renders continue", async () => {
  const localData = join(base, "local-service");
  app = await startDesktopApp({
    appRoot: REPO,
    version: "9.9.9",
    dataDir: join(base, "app"),
    env: { SVC_CONFIG_DIR: join(base, "config"), HOME: base },
    home: base,
    host: createWebHost({ folderRoot: () => base, open: async () => false }),
    // A short lease lets the restarted service take over the render the killed one was running.
    localService: { port: 0, dataDir: localData, env: { SVC_SERVER_LEASE_SECONDS: "2" } },
    settingsDefaults: { service: "local", concurrency: 1, downloadsDir: join(base, "downloads") },
    pollIntervalMs: 300,
  });
  const states: ServiceState[] = [];
  const queuedRenders = new Map<string, QueuedRenderView>();
  app.events.subscribe((message) => {
    if (message.event === "service") states.push(message.payload);
    if (message.event === "queuedRender") queuedRenders.set(message.payload.id, message.payload);
  });
  expect(app.supervisor.state().status).toBe("stopped");

  const projectA = await writeProject(join(base, "a"), { "index.html": tinyComposition("first") });
  const projectB = await writeProject(join(base, "b"), { "index.html": tinyComposition("second") });
  const submit = (dir: string) => app.router.invoke("queue.submit", { dir, settings: TINY_RENDER });
  const first = (await submit(projectA)) as { ok: true; data: QueuedRenderView };
  const second = (await submit(projectB)) as { ok: true; data: QueuedRenderView };
  expect(first.ok && second.ok).toBe(true);

  // The first queued render started the service; kill it while the first render is on it.
  const url = await waitFor("the service to be ready", () => app.supervisor.state().url);
  expect(states.map((s) => s.status).slice(0, 2)).toEqual(["starting", "ready"]);
  const { api_key: apiKey } = JSON.parse(
    await readFile(join(localData, "credentials"), "utf8"),
  ) as { api_key: string };
  const client = new ApiClient({ baseUrl: url, credential: apiKey });
  await waitFor("the first render to be on the service", async () => {
    const renderId = queuedRenders.get(first.data.id)?.renderId;
    if (!renderId) return undefined;
    const record = await client.getRender(renderId);
    return record.status === "rendering" || record.status === "queued" ? true : undefined;
  });
  expect(queuedRenders.get(second.data.id)?.status).toBe("waiting");
  const killed = app.supervisor.pid!;
  process.kill(killed, "SIGKILL");

  await waitFor("the service to be restarted", () =>
    app.supervisor.state().restarts === 1 && app.supervisor.state().status === "ready"
      ? true
      : undefined,
  );
  expect(app.supervisor.pid).not.toBe(killed);
  expect(app.supervisor.state().url).toBe(url);
  expect(states.map((s) => s.status)).toEqual(["starting", "ready", "restarting", "ready"]);

  const done = await waitFor(
    "both queued renders to finish",
    () => {
      const a = queuedRenders.get(first.data.id);
      const b = queuedRenders.get(second.data.id);
      const finished = (queuedRender: QueuedRenderView | undefined) =>
        queuedRender?.status === "completed" || queuedRender?.status === "failed";
      return finished(a) && finished(b) ? [a!, b!] : undefined;
    },
    { timeoutMs: 120_000 },
  );
  for (const queuedRender of done) {
    expect(queuedRender.error).toBeUndefined();
    expect(queuedRender.status).toBe("completed");
    expect(existsSync(queuedRender.outputPath!)).toBe(true);
  }

  await app.close();
  expect(app.supervisor.state().status).toBe("stopped");
  expect(app.supervisor.pid).toBeUndefined();
});
