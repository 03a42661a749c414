// Web mode: the desktop app's main-process services served to a browser on 127.0.0.1.
// Static files of the built renderer are public on loopback (a URL fragment never reaches the
// server, so the page itself cannot carry the token); every API request and the event socket must
// present the random token, and requests whose Origin (or Host) is not this server are refused.
// The IPC contract travels as `POST /api/ipc/<method>` (JSON input in, `IpcResult` out: the HTTP
// status is about the transport, the envelope about the method) and push events as JSON messages
// on the WebSocket `/api/events`. Browsers cannot set headers on a WebSocket, so there the token
// travels as the subprotocol `svc.token.<token>`.
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join, resolve, sep } from "node:path";
import { WebSocketServer } from "ws";
import { sameSecret } from "../node/index";
import { EVENTS_PROTOCOL, TOKEN_PROTOCOL_PREFIX } from "../shared/ipc";
import type { IpcRouter } from "./ipc-router";
import { contentTypeFor } from "../shared/content-types";

export interface WebServerOptions {
  /** Folder with the built renderer (index.html + assets); a placeholder page is served without it. */
  rendererDir?: string;
  host?: string;
  port?: number;
  token?: string;
  version: string;
  /** The app's services; without them only /api/hello answers. */
  router?: IpcRouter;
  /** The app's icon (a PNG), served as /favicon.ico so browsers find it without a 404. */
  iconFile?: string;
}

export interface WebServer {
  url: string;
  origin: string;
  token: string;
  close(): Promise<void>;
}

/**
 * The renderer's policy: only its own scripts and styles. Previews run in frames of their own
 * loopback origin (src/main/preview-server.ts); History thumbnails come from the service's URL;
 * finished videos play from the media server (src/main/media-server.ts) or a signed URL.
 */
export const RENDERER_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: http: https:; connect-src 'self' ws://127.0.0.1:*; frame-src http://127.0.0.1:*; media-src 'self' http: https:; object-src 'none'; base-uri 'self'; form-action 'self'";

const SECURITY_HEADERS = {
  // The same policy as src/renderer/index.html (keep the two equal; web-server.test.ts checks).
  "content-security-policy": RENDERER_CSP,
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

function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header?.startsWith("Bearer ")) return header.slice("Bearer ".length).trim();
  return undefined;
}

/** Token from `Authorization: Bearer` or, on a WebSocket, the `svc.token.<token>` subprotocol. */
function presentedToken(req: IncomingMessage): string | undefined {
  const bearer = bearerToken(req);
  if (bearer) return bearer;
  const protocols = String(req.headers["sec-websocket-protocol"] ?? "")
    .split(",")
    .map((value) => value.trim());
  return protocols
    .find((value) => value.startsWith(TOKEN_PROTOCOL_PREFIX))
    ?.slice(TOKEN_PROTOCOL_PREFIX.length);
}

const MAX_IPC_BODY_BYTES = 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_IPC_BODY_BYTES) throw new Error("too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
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
    if (pathname === "/favicon.ico" && options.iconFile) {
      await serveFile(req, res, options.iconFile, "image/png");
      return;
    }
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
    await serveFile(req, res, file, contentTypeFor(file));
  }

  async function serveFile(
    req: IncomingMessage,
    res: ServerResponse,
    file: string,
    contentType: string,
  ) {
    try {
      const info = await stat(file);
      if (!info.isFile()) throw new Error("not a file");
      res.writeHead(200, {
        "content-type": contentType,
        "content-length": info.size,
        ...SECURITY_HEADERS,
      });
      if (req.method === "HEAD") res.end();
      else createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404, SECURITY_HEADERS).end("Not found");
    }
  }

  /** Why an API request or socket is refused, or undefined when it may go on. */
  function refusal(
    req: IncomingMessage,
  ): { status: number; code: string; message: string } | undefined {
    const requestOrigin = req.headers.origin;
    const hostHeader = req.headers.host ?? "";
    const port = new URL(origin).port;
    // A foreign Host means DNS rebinding: a page of another site resolving to 127.0.0.1.
    if (
      requestOrigin
        ? requestOrigin !== origin
        : ![`${host}:${port}`, `localhost:${port}`].includes(hostHeader)
    ) {
      return {
        status: 403,
        code: "forbidden_origin",
        message: "Requests from other sites are refused.",
      };
    }
    if (!sameSecret(token, presentedToken(req))) {
      return {
        status: 401,
        code: "authentication_failed",
        message: "Missing or wrong web-mode token. Open the URL that `npm start` printed.",
      };
    }
    return undefined;
  }

  async function handleIpc(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
  ): Promise<void> {
    if (!options.router) {
      sendJson(res, 404, {
        error: { code: "not_found", message: "This server has no app services." },
      });
      return;
    }
    if (req.method !== "POST") {
      sendJson(res, 405, {
        error: { code: "method_not_allowed", message: "IPC calls are POST requests." },
      });
      return;
    }
    if (!String(req.headers["content-type"] ?? "").startsWith("application/json")) {
      sendJson(res, 415, {
        error: { code: "unsupported_media_type", message: "Send the input as JSON." },
      });
      return;
    }
    let input: unknown;
    try {
      const text = await readBody(req);
      input = text.trim() === "" ? undefined : JSON.parse(text);
    } catch {
      sendJson(res, 400, {
        error: { code: "invalid_json", message: "The request body is not JSON." },
      });
      return;
    }
    sendJson(res, 200, await options.router.invoke(method, input));
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname.startsWith("/api/")) {
      const refused = refusal(req);
      if (refused) {
        sendJson(res, refused.status, { error: { code: refused.code, message: refused.message } });
        return;
      }
      if (url.pathname === "/api/hello") {
        sendJson(res, 200, { data: { app: "svc Desktop", version: options.version } });
        return;
      }
      if (url.pathname.startsWith("/api/ipc/")) {
        const method = decodeURIComponent(url.pathname.slice("/api/ipc/".length));
        handleIpc(req, res, method).catch(() => {
          if (!res.headersSent)
            sendJson(res, 500, { error: { code: "internal_error", message: "IPC failed." } });
          else res.end();
        });
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

  const sockets = new WebSocketServer({
    noServer: true,
    handleProtocols: (protocols) => (protocols.has(EVENTS_PROTOCOL) ? EVENTS_PROTOCOL : false),
  });
  server.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const refused =
      url.pathname === "/api/events" && options.router
        ? refusal(req)
        : { status: 404, message: "Not found" };
    if (refused) {
      socket.end(
        `HTTP/1.1 ${refused.status} ${refused.status === 404 ? "Not Found" : refused.status === 401 ? "Unauthorized" : "Forbidden"}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
      );
      return;
    }
    sockets.handleUpgrade(req, socket, head, (ws) => {
      const unsubscribe = options.router!.events.subscribe((message) => {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
      });
      ws.on("close", unsubscribe);
      ws.on("error", unsubscribe);
    });
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
        for (const client of sockets.clients) client.terminate();
        sockets.close();
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

export function defaultRendererDir(projectRoot: string): string {
  return join(projectRoot, "out", "renderer");
}

/** The app's icon, the same file electron-builder puts on the installed app. */
export function defaultIconFile(projectRoot: string): string {
  return join(projectRoot, "resources", "icon.png");
}
