// Web mode: the desktop app's main-process services served to a browser on 127.0.0.1.
// Static files of the built renderer are public on loopback (a URL fragment never reaches the
// server, so the page itself cannot carry the token); every API request must present the random
// token, and requests whose Origin is not this server are refused.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, resolve, sep } from "node:path";

export interface WebServerOptions {
  /** Folder with the built renderer (index.html + assets); a placeholder page is served without it. */
  rendererDir?: string;
  host?: string;
  port?: number;
  token?: string;
  version: string;
}

export interface WebServer {
  url: string;
  origin: string;
  token: string;
  close(): Promise<void>;
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
};

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; style-src 'self' 'unsafe-inline'; connect-src 'self' ws://127.0.0.1:*; frame-src 'self' http://127.0.0.1:*",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

const PLACEHOLDER = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>svc Desktop</title></head>
<body><main><h1>svc Desktop</h1><p id="status">Connecting…</p></main>
<script type="module">
const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? "";
fetch("/api/hello", { headers: { authorization: "Bearer " + token } })
  .then((r) => r.ok ? r.json() : Promise.reject(new Error("HTTP " + r.status)))
  .then((body) => { document.getElementById("status").textContent = "Connected to svc " + body.data.version; })
  .catch((e) => { document.getElementById("status").textContent = "Not connected: " + e.message; });
</script></body></html>`;

function tokensMatch(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header?.startsWith("Bearer ")) return header.slice("Bearer ".length).trim();
  return undefined;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", ...SECURITY_HEADERS });
  res.end(JSON.stringify(body));
}

export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const token = options.token ?? randomBytes(24).toString("base64url");
  const host = options.host ?? "127.0.0.1";
  const rendererRoot = options.rendererDir ? resolve(options.rendererDir) : undefined;
  let origin = "";

  async function serveStatic(req: IncomingMessage, res: ServerResponse, pathname: string) {
    if (!rendererRoot) {
      res.writeHead(pathname === "/" ? 200 : 404, {
        "content-type": "text/html; charset=utf-8",
        ...SECURITY_HEADERS,
      });
      res.end(pathname === "/" ? PLACEHOLDER : "Not found");
      return;
    }
    const relative =
      pathname === "/" ? "index.html" : decodeURIComponent(pathname).replace(/^\/+/, "");
    const file = resolve(rendererRoot, relative);
    if (file !== rendererRoot && !file.startsWith(rendererRoot + sep)) {
      res.writeHead(404).end();
      return;
    }
    try {
      const info = await stat(file);
      if (!info.isFile()) throw new Error("not a file");
      res.writeHead(200, {
        "content-type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream",
        "content-length": info.size,
        ...SECURITY_HEADERS,
      });
      if (req.method === "HEAD") res.end();
      else createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404, SECURITY_HEADERS).end("Not found");
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname.startsWith("/api/")) {
      const requestOrigin = req.headers.origin;
      if (requestOrigin && requestOrigin !== origin) {
        sendJson(res, 403, {
          error: { code: "forbidden_origin", message: "Requests from other sites are refused." },
        });
        return;
      }
      if (!tokensMatch(token, bearerToken(req))) {
        sendJson(res, 401, {
          error: {
            code: "authentication_failed",
            message: "Missing or wrong web-mode token. Open the URL that `npm start` printed.",
          },
        });
        return;
      }
      if (url.pathname === "/api/hello") {
        sendJson(res, 200, { data: { app: "svc Desktop", version: options.version } });
        return;
      }
      sendJson(res, 404, {
        error: { code: "not_found", message: `No API method at ${url.pathname}.` },
      });
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, SECURITY_HEADERS).end();
      return;
    }
    void serveStatic(req, res, url.pathname);
  });

  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://${host}:${port}`;
  return {
    origin,
    token,
    url: `${origin}/#token=${token}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

export function defaultRendererDir(projectRoot: string): string {
  return join(projectRoot, "out", "renderer");
}
