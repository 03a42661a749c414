// The queue survives the app being killed: the main process runs in a child process (web mode), is
// SIGKILLed while its queued render renders on the service, and is started again. The queued render
// must finish from where it was (re-attached by render id, no second upload or render), with the
// video downloaded exactly once. A counting proxy between the app and the real service sees every
// request.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { DesktopApi, QueuedRenderView } from "../shared/ipc";
import { ApiClient } from "../core/api-client";
import { apiFromBridge, createWebBridge, type EventSocket } from "../renderer/transport";
import { writeJsonFileAtomic } from "../node/atomic-file";
import {
  REPO,
  childEnv,
  startCountingProxy,
  startService,
  tempDir,
  writeProject,
  type CountingProxy,
  type TestService,
} from "./testing/support";
import { waitFor } from "../shared/testing/wait-for";

let base: string;
let service: TestService;
let proxy: CountingProxy;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  base = await tempDir("svc-desktop-restart-");
  proxy = await startCountingProxy();
  // Signed video URLs name the proxy too, so downloads are counted.
  service = await startService(join(base, "service"), { SVC_SERVER_PUBLIC_URL: proxy.url });
  proxy.setUpstream(service.url);
});

afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await service?.stop();
  await proxy?.close();
  await rm(base, { recursive: true, force: true });
});

async function startApp(
  dataDir: string,
): Promise<{ child: ChildProcess; api: DesktopApi; close(): void }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(REPO, "src/main/testing/app-process.ts")],
    {
      cwd: REPO,
      env: childEnv({
        SVC_DESKTOP_DATA_DIR: dataDir,
        SVC_API_KEY: service.apiKey,
        SVC_NO_OPEN: "1",
        HOME: base,
      }),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.add(child);
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const { origin, token } = await new Promise<{ origin: string; token: string }>(
    (resolve, reject) => {
      let stdout = "";
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
        const line = stdout.split("\n").find((l) => l.startsWith("{"));
        if (line) resolve(JSON.parse(line) as { origin: string; token: string });
      });
      child.once("exit", (code) => reject(new Error(`the app exited (${code}): ${stderr}`)));
    },
  );
  const bridge = createWebBridge({
    baseUrl: origin,
    token,
    openSocket: (url, protocols) =>
      new WebSocket(url, protocols, { origin }) as unknown as EventSocket,
  });
  return { child, api: apiFromBridge(bridge), close: () => bridge.close() };
}

it("finishes a queued render after the app is killed while it renders: one upload, one render, one download", async () => {
  const dataDir = join(base, "app");
  const downloads = join(base, "downloads");
  await writeJsonFileAtomic(join(dataDir, "settings.json"), {
    service: proxy.url,
    downloadsDir: downloads,
  });
  const project = await writeProject(join(base, "project"), {
    // Two seconds at 4 fps: long enough to be caught while rendering, still quick.
    "index.html": `<!doctype html><html><head><style>body{margin:0;background:#345}</style></head><body>
<div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="2"><p>restart</p></div></body></html>`,
  });

  const first = await startApp(dataDir);
  const submitted = await first.api["queue.submit"]({
    dir: project,
    settings: { fps: 4, quality: "draft", format: "mp4", resolution: "1080p", title: "restart" },
  });

  // Kill the app once the service is rendering the queued render and the render id is on disk.
  const client = new ApiClient({ baseUrl: service.url, credential: service.apiKey });
  const renderId = await waitFor("the render to be rendering", async () => {
    const stored = JSON.parse(
      await readFile(join(dataDir, "queue.json"), "utf8").catch(() => "{}"),
    ) as {
      queuedRenders?: Array<{ renderId?: string }>;
    };
    const id = stored.queuedRenders?.[0]?.renderId;
    if (!id) return undefined;
    return (await client.getRender(id)).status === "rendering" ? id : undefined;
  });
  first.child.kill("SIGKILL");
  await once(first.child, "exit");
  first.close();

  const onDisk = JSON.parse(await readFile(join(dataDir, "queue.json"), "utf8")) as {
    queuedRenders: QueuedRenderView[];
  };
  expect(onDisk.queuedRenders).toHaveLength(1);
  expect(onDisk.queuedRenders[0]).toMatchObject({ id: submitted.id, status: "running", renderId });
  expect(proxy.count("GET video")).toBe(0);

  const second = await startApp(dataDir);
  const finished = await waitFor("the queued render to finish after the restart", async () => {
    const queuedRender = (await second.api["queue.list"]()).find((j) => j.id === submitted.id);
    return queuedRender && (queuedRender.status === "completed" || queuedRender.status === "failed")
      ? queuedRender
      : undefined;
  });
  expect(finished.error).toBeUndefined();
  expect(finished).toMatchObject({ status: "completed", renderId, fileMissing: false });
  const day = new Date(finished.createdAt);
  const pad = (n: number) => String(n).padStart(2, "0");
  expect(await readdir(downloads)).toEqual([
    `restart ${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}.mp4`,
  ]);

  expect(proxy.count("GET video")).toBe(1);
  expect(proxy.count("POST /v3/assets")).toBe(1);
  expect(proxy.count("POST /v3/svc/renders")).toBe(1);
  const renders = await client.listRenders({ limit: 100 });
  expect(renders.data.map((r) => r.render_id)).toEqual([renderId]);

  second.child.kill("SIGTERM");
  await once(second.child, "exit");
  second.close();
});
