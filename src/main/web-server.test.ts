import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { request as httpRequest } from "node:http";
import { WebSocket } from "ws";
import { EVENTS_PROTOCOL, TOKEN_PROTOCOL_PREFIX } from "../shared/ipc";
import { startDesktopApp, type DesktopApp } from "./desktop-app";
import { createWebHost } from "./host";
import { REPO } from "./testing/support";
import { defaultIconFile, RENDERER_CSP, startWebServer, type WebServer } from "./web-server";
import { waitFor } from "../shared/testing/wait-for";

describe("web mode server", () => {
  let dir: string;
  let server: WebServer;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-web-"));
    await mkdir(join(dir, "renderer"));
    await writeFile(join(dir, "renderer", "index.html"), "<h1>app</h1>");
    await writeFile(join(dir, "secret.txt"), "outside the renderer folder");
    server = await startWebServer({
      version: "9.9.9",
      rendererDir: join(dir, "renderer"),
      iconFile: defaultIconFile(REPO),
    });
  });

  afterEach(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("listens on 127.0.0.1 and prints a URL carrying the token in its fragment", () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]{20,}$/);
  });

  it("answers API calls only with the right token", async () => {
    expect((await fetch(`${server.origin}/api/hello`)).status).toBe(401);
    const ok = await fetch(`${server.origin}/api/hello`, {
      headers: { authorization: `Bearer ${server.token}` },
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ data: { app: "svc Desktop", version: "9.9.9" } });
  });

  it("sends the renderer's own strict policy, the same as its meta tag", async () => {
    const page = await fetch(`${server.origin}/`);
    expect(page.headers.get("content-security-policy")).toBe(RENDERER_CSP);
    const html = await readFile(join(REPO, "src", "renderer", "index.html"), "utf8");
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(html);
    expect(meta?.[1]).toBe(RENDERER_CSP);
    expect(RENDERER_CSP).not.toContain("unsafe-inline");
  });

  it("serves the app's icon as /favicon.ico, so browsers log no 404 on start", async () => {
    const icon = await fetch(`${server.origin}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await icon.arrayBuffer())).toEqual(await readFile(defaultIconFile(REPO)));
  });

  it("serves the built renderer but nothing outside it", async () => {
    expect(await (await fetch(`${server.origin}/`)).text()).toBe("<h1>app</h1>");
    const escape = await fetch(`${server.origin}/..%2Fsecret.txt`);
    expect(escape.status).toBe(404);
  });
});

describe("web mode IPC and events", () => {
  let dir: string;
  let app: DesktopApp;
  let server: WebServer;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-web-ipc-"));
    app = await startDesktopApp({
      appRoot: REPO,
      version: "9.9.9",
      dataDir: join(dir, "app"),
      env: { SVC_CONFIG_DIR: join(dir, "config"), HOME: dir },
      home: dir,
      host: createWebHost({ folderRoot: () => dir, open: async () => false }),
      settingsDefaults: { service: "http://127.0.0.1:9", downloadsDir: join(dir, "downloads") },
    });
    server = await startWebServer({ version: "9.9.9", router: app.router });
  });

  afterEach(async () => {
    await server.close();
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  const ipc = (headers: Record<string, string>, method = "app.info") =>
    fetch(`${server.origin}/api/ipc/${method}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: "{}",
    });

  it("answers IPC calls with the token and refuses a missing or wrong one", async () => {
    const ok = await ipc({ authorization: `Bearer ${server.token}`, origin: server.origin });
    expect(await ok.json()).toEqual({ ok: true, data: { app: "svc Desktop", version: "9.9.9" } });
    const missing = await ipc({ origin: server.origin });
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe(
      "authentication_failed",
    );
    expect((await ipc({ authorization: "Bearer wrong", origin: server.origin })).status).toBe(401);
  });

  it("refuses IPC calls from a foreign Origin or Host, even with the token", async () => {
    const foreign = await ipc({
      authorization: `Bearer ${server.token}`,
      origin: "http://evil.example",
    });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe(
      "forbidden_origin",
    );
    // DNS rebinding: a foreign name that resolves to 127.0.0.1, no Origin header.
    const port = new URL(server.origin).port;
    const rebound = await new Promise<number>((resolveStatus, reject) => {
      const req = httpRequest(
        `${server.origin}/api/ipc/app.info`,
        {
          method: "POST",
          headers: {
            host: `evil.example:${port}`,
            authorization: `Bearer ${server.token}`,
            "content-type": "application/json",
          },
        },
        (res) => {
          res.resume();
          resolveStatus(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end("{}");
    });
    expect(rebound).toBe(403);
  });

  it("keeps method errors in the envelope with their code", async () => {
    const unknown = await ipc({ authorization: `Bearer ${server.token}` }, "queue.explode");
    expect(await unknown.json()).toMatchObject({ ok: false, error: { code: "unknown_method" } });
    const invalid = await ipc({ authorization: `Bearer ${server.token}` }, "queue.cancel");
    expect(await invalid.json()).toMatchObject({ ok: false, error: { code: "invalid_input" } });
  });

  async function connect(
    protocols: string[],
    origin: string,
  ): Promise<{ opened: boolean; status?: number }> {
    const socket = new WebSocket(`${server.origin.replace("http", "ws")}/api/events`, protocols, {
      origin,
    });
    return new Promise((resolveOutcome) => {
      socket.on("open", () => {
        socket.close();
        resolveOutcome({ opened: true });
      });
      socket.on("unexpected-response", (_req, res) =>
        resolveOutcome({ opened: false, status: res.statusCode }),
      );
      socket.on("error", () => resolveOutcome({ opened: false }));
    });
  }

  it("opens the event socket only with the token and from its own Origin", async () => {
    const token = `${TOKEN_PROTOCOL_PREFIX}${server.token}`;
    expect(await connect([EVENTS_PROTOCOL, token], server.origin)).toEqual({ opened: true });
    expect(await connect([EVENTS_PROTOCOL], server.origin)).toEqual({ opened: false, status: 401 });
    expect(
      await connect([EVENTS_PROTOCOL, `${TOKEN_PROTOCOL_PREFIX}wrong`], server.origin),
    ).toEqual({
      opened: false,
      status: 401,
    });
    expect(await connect([EVENTS_PROTOCOL, token], "http://evil.example")).toEqual({
      opened: false,
      status: 403,
    });
  });

  it("pushes events to a connected socket in the order they happen", async () => {
    const socket = new WebSocket(`${server.origin.replace("http", "ws")}/api/events`, [
      EVENTS_PROTOCOL,
      `${TOKEN_PROTOCOL_PREFIX}${server.token}`,
    ]);
    const messages: Array<{ event: string; payload: { restarts: number } }> = [];
    socket.on("message", (data: Buffer) => messages.push(JSON.parse(data.toString())));
    await new Promise((r) => socket.once("open", r));
    for (let n = 0; n < 20; n++) {
      app.events.emit("service", {
        mode: "remote",
        status: "remote",
        url: undefined,
        restarts: n,
        message: undefined,
      });
    }
    await waitFor("20 events", () => (messages.length >= 20 ? true : undefined), {
      timeoutMs: 10_000,
    });
    expect(messages.map((m) => m.payload.restarts)).toEqual([...Array(20).keys()]);
    socket.close();
  });
});
