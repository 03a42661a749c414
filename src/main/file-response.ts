// The app's read-only loopback file servers — the preview server (project files) and the media
// server (downloaded videos) — are started, checked and answered alike: a free port on
// 127.0.0.1, the Host check against DNS rebinding, and a file sent with Range requests (a
// <video> seeks with them).
import { createReadStream } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { contentTypeFor } from "../shared/content-types";

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` within `size`, or undefined when unsatisfiable. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | undefined {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (!match[1] && !match[2])) return undefined;
  const start = match[1] ? Number(match[1]) : Math.max(0, size - Number(match[2]));
  const end = match[1] && match[2] ? Math.min(Number(match[2]), size - 1) : size - 1;
  return start <= end && start < size ? { start, end } : undefined;
}

/** Sends `file` (of `size` bytes), or the part its Range header asks for. */
export function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  file: string,
  size: number,
  headers: Record<string, string>,
): void {
  const range = parseRange(req.headers.range, size);
  if (req.headers.range && !range) {
    res.writeHead(416, { "content-range": `bytes */${size}` }).end();
    return;
  }
  const { start, end } = range ?? { start: 0, end: size - 1 };
  res.writeHead(range ? 206 : 200, {
    "content-type": contentTypeFor(file),
    "content-length": size === 0 ? 0 : end - start + 1,
    "accept-ranges": "bytes",
    "x-content-type-options": "nosniff",
    ...headers,
    ...(range ? { "content-range": `bytes ${start}-${end}/${size}` } : {}),
  });
  if (req.method === "HEAD" || size === 0) {
    res.end();
    return;
  }
  createReadStream(file, { start, end })
    .on("error", () => res.destroy())
    .pipe(res);
}

/** The request names this loopback server as its Host (any other is DNS rebinding by a site). */
export function isOwnHost(req: IncomingMessage): boolean {
  const port = (req.socket.address() as AddressInfo).port;
  return [`127.0.0.1:${port}`, `localhost:${port}`].includes(req.headers.host ?? "");
}

/** An HTTP server on 127.0.0.1 (a free port) answering with `handle`; a failure answers 500. */
export async function startLoopbackServer(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<{ server: Server; origin: string }> {
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
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Answers 403 to a foreign Host and 405 to anything but GET/HEAD; true when it answered. */
export function refuseRequest(req: IncomingMessage, res: ServerResponse): boolean {
  if (!isOwnHost(req)) {
    res.writeHead(403).end();
    return true;
  }
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405).end();
    return true;
  }
  return false;
}
