// Serves a project folder to the page over a local origin (never file://), so fetch(), module
// scripts, fonts and sub-compositions behave as on a web server. Every request path is resolved
// and checked to stay inside the project, symlinks included. Media needs HTTP Range for seeking.
import { createReadStream } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve, sep } from "node:path";
import { contentTypeFor } from "../shared/content-types";

export interface ProjectServer {
  origin: string;
  close(): Promise<void>;
}

/** Resolves a URL path inside root, or undefined when it would leave it. */
export async function resolveInsideRoot(
  root: string,
  urlPath: string,
): Promise<string | undefined> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes("\0")) return undefined;
  const candidate = resolve(root, "." + (decoded.startsWith("/") ? decoded : `/${decoded}`));
  if (candidate !== root && !candidate.startsWith(root + sep)) return undefined;
  try {
    const real = await realpath(candidate);
    if (real !== root && !real.startsWith(root + sep)) return undefined;
    return real;
  } catch {
    return undefined;
  }
}

function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | undefined {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match) return undefined;
  const [, from, to] = match;
  if (!from && !to) return undefined;
  const start = from ? Number(from) : Math.max(0, size - Number(to));
  const end = from && to ? Math.min(Number(to), size - 1) : size - 1;
  return start <= end && start < size ? { start, end } : undefined;
}

export async function startProjectServer(projectDir: string): Promise<ProjectServer> {
  const root = await realpath(resolve(projectDir));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405).end();
      return;
    }
    const pathname = new URL(req.url ?? "/", "http://localhost").pathname;
    let file = await resolveInsideRoot(root, pathname);
    let info = file ? await stat(file).catch(() => undefined) : undefined;
    if (file && info?.isDirectory()) {
      file = await resolveInsideRoot(root, `${pathname.replace(/\/$/, "")}/index.html`);
      info = file ? await stat(file).catch(() => undefined) : undefined;
    }
    if (!file || !info?.isFile()) {
      res.writeHead(404, { "content-type": "text/plain" }).end(`Not found: ${pathname}`);
      return;
    }
    const headers: Record<string, string | number> = {
      "content-type": contentTypeFor(file),
      "accept-ranges": "bytes",
      "cache-control": "no-cache",
    };
    const range = parseRange(req.headers.range, info.size);
    if (req.headers.range && !range) {
      res.writeHead(416, { "content-range": `bytes */${info.size}` }).end();
      return;
    }
    const { start, end } = range ?? { start: 0, end: info.size - 1 };
    headers["content-length"] = info.size === 0 ? 0 : end - start + 1;
    if (range) headers["content-range"] = `bytes ${start}-${end}/${info.size}`;
    res.writeHead(range ? 206 : 200, headers);
    if (req.method === "HEAD" || info.size === 0) {
      res.end();
      return;
    }
    const stream = createReadStream(file, { start, end });
    stream.on("error", () => res.destroy());
    stream.pipe(res);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => done());
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
