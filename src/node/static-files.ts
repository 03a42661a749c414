// The one read-only loopback file server of the Node tier, used by the engine's project server
// (a render's page), the desktop preview server (project files) and media server (downloaded
// videos): a free port on 127.0.0.1; requests naming another Host refused (DNS rebinding by a web
// site); only GET and HEAD; every path resolved and kept inside its root, symlinks included; and
// a file sent with Range requests (a <video> seeks with them) by the shared parser
// (src/shared/byte-range.ts: a malformed Range is ignored, a range past the end answers 416).
// The template's fastify app (templates/preview-render, through `svc/node`) answers its file
// routes with the same pieces: keepInsideRoot, rangeAnswer and isLoopbackHostHeader.
import { createReadStream } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve, sep } from "node:path";
import { parseByteRange } from "../shared/byte-range";
import { contentTypeFor } from "../shared/content-types";

export interface LoopbackServer {
  server: Server;
  origin: string;
  close(): Promise<void>;
}

/** The real path of URL path `urlPath` (still %-encoded) inside `root`, or undefined when it would leave it. */
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
  return keepInsideRoot(root, decoded);
}

/**
 * The real path of `path` (decoded, relative to `root` whether or not it starts with "/") inside
 * `root`, or undefined when it, or a symlink on the way, would leave it. `root` is a real path.
 */
export async function keepInsideRoot(root: string, path: string): Promise<string | undefined> {
  if (path.includes("\0")) return undefined;
  const candidate = resolve(root, `.${path.startsWith("/") ? path : `/${path}`}`);
  if (candidate !== root && !candidate.startsWith(root + sep)) return undefined;
  try {
    const real = await realpath(candidate);
    return real === root || real.startsWith(root + sep) ? real : undefined;
  } catch {
    return undefined;
  }
}

/** The file a URL path names inside `root` (a folder: its index.html), with its size. */
export async function findFile(
  root: string,
  pathname: string,
): Promise<{ file: string; size: number } | undefined> {
  let file = await resolveInsideRoot(root, pathname);
  let info = file ? await stat(file).catch(() => undefined) : undefined;
  if (file && info?.isDirectory()) {
    file = await resolveInsideRoot(root, `${pathname.replace(/\/$/, "")}/index.html`);
    info = file ? await stat(file).catch(() => undefined) : undefined;
  }
  return file && info?.isFile() ? { file, size: info.size } : undefined;
}

/** How to answer a GET for `size` bytes with this Range header (a server of any framework). */
export type RangeAnswer =
  | { status: 416; headers: Record<string, string> }
  | { status: 200 | 206; start: number; end: number; headers: Record<string, string> };

/**
 * The status, the length and range headers, and the bytes to send: all of them without a Range
 * (or with a malformed one), the part asked for (206), or 416 for a range past the end.
 */
export function rangeAnswer(rangeHeader: string | undefined, size: number): RangeAnswer {
  const range = parseByteRange(rangeHeader, size);
  if (range === "unsatisfiable")
    return { status: 416, headers: { "content-range": `bytes */${size}`, "content-length": "0" } };
  const { start, end } = range ?? { start: 0, end: size - 1 };
  return {
    status: range ? 206 : 200,
    start,
    end,
    headers: {
      "content-length": String(size === 0 ? 0 : end - start + 1),
      "accept-ranges": "bytes",
      ...(range ? { "content-range": `bytes ${start}-${end}/${size}` } : {}),
    },
  };
}

/** Sends `file` (of `size` bytes), or the part its Range header asks for, with `headers`. */
export function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  file: string,
  size: number,
  headers: Record<string, string>,
): void {
  const answer = rangeAnswer(req.headers.range, size);
  if (answer.status === 416) {
    res.writeHead(416, answer.headers).end();
    return;
  }
  res.writeHead(answer.status, {
    "content-type": contentTypeFor(file),
    ...answer.headers,
    ...headers,
  });
  if (req.method === "HEAD" || size === 0) {
    res.end();
    return;
  }
  createReadStream(file, { start: answer.start, end: answer.end })
    .on("error", () => res.destroy())
    .pipe(res);
}

/**
 * Whether a Host header names a loopback address at `port` (127.0.0.1, localhost or [::1]); any
 * other name reaching a loopback server is DNS rebinding by a web site.
 */
export function isLoopbackHostHeader(host: string | undefined, port: number): boolean {
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`].includes(host ?? "");
}

/** The request names this loopback server as its Host (any other is DNS rebinding by a site). */
export function isOwnHost(req: IncomingMessage): boolean {
  return isLoopbackHostHeader(req.headers.host, (req.socket.address() as AddressInfo).port);
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

/**
 * An HTTP server on 127.0.0.1 (a free port) answering with `handle` once refuseRequest let the
 * request through; a failure answers 500.
 */
export async function startLoopbackServer(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<LoopbackServer> {
  const server = createServer((req, res) => {
    if (refuseRequest(req, res)) return;
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => done());
  });
  return {
    server,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/**
 * Serves the files under `root` as they are (no cache), 404 for anything else. Without
 * `nosniff`: a render loads a page's scripts whatever their file ending, as a web server would.
 */
export async function startStaticServer(root: string): Promise<LoopbackServer> {
  return startLoopbackServer(async (req, res) => {
    const pathname = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const found = await findFile(root, pathname);
    if (!found) {
      res.writeHead(404, { "content-type": "text/plain" }).end(`Not found: ${pathname}`);
      return;
    }
    sendFile(req, res, found.file, found.size, { "cache-control": "no-cache" });
  });
}
