import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "./web-server";

describe("web mode server", () => {
  let dir: string;
  let server: WebServer;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-web-"));
    await mkdir(join(dir, "renderer"));
    await writeFile(join(dir, "renderer", "index.html"), "<h1>app</h1>");
    await writeFile(join(dir, "secret.txt"), "outside the renderer folder");
    server = await startWebServer({ version: "9.9.9", rendererDir: join(dir, "renderer") });
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

  it("serves the built renderer but nothing outside it", async () => {
    expect(await (await fetch(`${server.origin}/`)).text()).toBe("<h1>app</h1>");
    const escape = await fetch(`${server.origin}/..%2Fsecret.txt`);
    expect(escape.status).toBe(404);
  });
});
