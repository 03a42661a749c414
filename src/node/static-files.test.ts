import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStaticServer, type LoopbackServer } from "./static-files";

let dir: string;
let server: LoopbackServer;

/** GET through node:http, so a test can send any Host header. */
function get(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const url = new URL(path, server.origin);
  return new Promise((resolve, reject) => {
    request(url, { headers, path }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    })
      .on("error", reject)
      .end();
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-static-"));
  await mkdir(join(dir, "project/sub"), { recursive: true });
  await writeFile(join(dir, "project/clip.txt"), "0123456789");
  await writeFile(join(dir, "project/sub/index.html"), "<p>sub</p>");
  await writeFile(join(dir, "secret.txt"), "secret");
  await symlink(join(dir, "secret.txt"), join(dir, "project/link.txt"));
  server = await startStaticServer(join(dir, "project"));
});

afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe("the loopback file server", () => {
  it("sends the part a Range asks for, and 416 for a range past the end", async () => {
    const part = await get("/clip.txt", { range: "bytes=2-4" });
    expect(part).toMatchObject({ status: 206, body: "234" });
    expect(part.headers["content-range"]).toBe("bytes 2-4/10");
    const past = await get("/clip.txt", { range: "bytes=10-" });
    expect(past.status).toBe(416);
    expect(past.headers["content-range"]).toBe("bytes */10");
  });

  it("ignores a malformed Range and sends the whole file (RFC 9110)", async () => {
    for (const range of ["items=0-1", "bytes=5-2", "bytes=0-1,4-5", "bytes=-"]) {
      expect(await get("/clip.txt", { range })).toMatchObject({ status: 200, body: "0123456789" });
    }
  });

  it("serves a folder's index.html and keeps paths and symlinks inside the root", async () => {
    expect(await get("/sub/")).toMatchObject({ status: 200, body: "<p>sub</p>" });
    expect((await get("/%2e%2e/secret.txt")).status).toBe(404);
    expect((await get("/link.txt")).status).toBe(404);
  });

  it("refuses a foreign Host (DNS rebinding) and anything but GET and HEAD", async () => {
    expect((await get("/clip.txt", { host: "attacker.example" })).status).toBe(403);
    const { port } = new URL(server.origin);
    expect((await get("/clip.txt", { host: `localhost:${port}` })).status).toBe(200);
    const posted = await new Promise<number>((resolve, reject) => {
      request(new URL("/clip.txt", server.origin), { method: "POST" }, (res) =>
        resolve(res.statusCode ?? 0),
      )
        .on("error", reject)
        .end();
    });
    expect(posted).toBe(405);
  });
});
