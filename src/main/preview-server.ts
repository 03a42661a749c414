// Live preview of a project folder: the renderer's <svc-player> loads the composition from a
// read-only HTTP server on 127.0.0.1 (never file://, so fetch(), module scripts and fonts behave
// as in a render). One server per project folder, started on first use, on the Node tier's one
// loopback file server (src/node/static-files.ts, as the engine's): every path is resolved and
// checked to stay inside the folder, symlinks included, and requests naming another host (DNS
// rebinding) are refused.
// The player fetches the composition with CORS, so loopback origins (the web-mode renderer) and
// "null" (Electron's file:// renderer and sandboxed frames) may read; no other web site may.
// Well-known CDN URLs (GSAP, npm files on jsdelivr/unpkg/cdnjs, Google Fonts) are answered under
// /__svc/libs/cdn/<host>/<path> from the same local copies renders use (src/node/cdn-files.ts);
// the frame document, the sub-compositions the runtime loads, and the project's own stylesheets
// and script files (served rewritten) point them there, so previews work offline and draw with the same fonts and libraries as renders. A CDN URL svc has no copy
// of is redirected to the CDN itself, as the page would have asked without the rewrite.
// An HTML file asked for with `?svc-frame=1` is answered with the player's frame document (the
// page runtime and frame bridge injected before any page script; src/shared/frame-document.ts):
// the app's <svc-player frame="served"> loads it as its frame's own URL, so the frame has its own
// origin and policy instead of inheriting the app window's CSP as a srcdoc frame would. That
// document is always sandboxed (CSP `sandbox allow-scripts`: an opaque origin even if it is opened
// outside the player's sandboxed iframe).
import { readFile, realpath } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { resolve } from "node:path";
import { CDN_LIBRARY_FOLDER, CDN_URL_IN_TEXT, rewriteCdnUrls } from "../shared/cdn";
import { contentTypeFor } from "../shared/content-types";
import { buildFrameDocument, FRAME_QUERY, servedFrameConfigScript } from "../shared/frame-document";
import { libraryResponse } from "../node/index";
import { findFile, sendFile, startLoopbackServer, type LoopbackServer } from "../node/index";
import { frameScript } from "./frame-script";

/** Path prefix of the library copies (the frame's library base): `<origin>/__svc/libs`. */
export const PREVIEW_LIBRARY_PATH = "/__svc/libs";
const CDN_PREFIX = `${PREVIEW_LIBRARY_PATH}/${CDN_LIBRARY_FOLDER}/`;

function allowedOrigin(origin: string | undefined): string | undefined {
  if (!origin) return undefined;
  if (origin === "null") return origin;
  return /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(origin) ? origin : undefined;
}

/** The composition at `file` as a served frame document (see the top of this file). */
async function serveFrame(file: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const html = buildFrameDocument(await readFile(file, "utf8"), {
    script: `${servedFrameConfigScript(PREVIEW_LIBRARY_PATH)}\n${await frameScript()}`,
    libraryBase: PREVIEW_LIBRARY_PATH,
  });
  const body = Buffer.from(html, "utf8");
  res.writeHead(200, {
    "content-type": "text/html; charset=utf-8",
    "content-length": body.length,
    "cache-control": "no-cache",
    "x-content-type-options": "nosniff",
    "content-security-policy": "sandbox allow-scripts",
  });
  res.end(req.method === "HEAD" ? undefined : body);
}

/** A CDN URL the frame was pointed at (see the top of this file). */
async function serveLibrary(
  encodedPath: string,
  search: string,
  req: IncomingMessage,
  res: ServerResponse,
  cors: Record<string, string>,
): Promise<void> {
  let path: string | undefined;
  try {
    path = decodeURIComponent(encodedPath);
  } catch {
    path = undefined; // malformed escapes name no file
  }
  const answer =
    path === undefined ? undefined : await libraryResponse(path + search, PREVIEW_LIBRARY_PATH);
  if (!answer) {
    res.writeHead(404, { "content-type": "text/plain", ...cors }).end("Not found");
  } else if ("redirect" in answer) {
    res.writeHead(302, { location: answer.redirect, "cache-control": "no-cache", ...cors }).end();
  } else {
    res.writeHead(200, {
      "content-type": answer.contentType,
      "content-length": answer.body.length,
      "cache-control": "no-cache",
      "x-content-type-options": "nosniff",
      ...cors,
    });
    res.end(req.method === "HEAD" ? undefined : answer.body);
  }
}

async function serveFile(root: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const corsOrigin = allowedOrigin(req.headers.origin);
  const cors: Record<string, string> = corsOrigin
    ? { "access-control-allow-origin": corsOrigin, vary: "origin" }
    : {};
  const requested = new URL(req.url ?? "/", "http://127.0.0.1");
  const { pathname } = requested;
  if (pathname.startsWith(CDN_PREFIX)) {
    await serveLibrary(pathname.slice(CDN_PREFIX.length), requested.search, req, res, cors);
    return;
  }
  const found = await findFile(root, pathname);
  if (!found) {
    res.writeHead(404, { "content-type": "text/plain", ...cors }).end("Not found");
    return;
  }
  const { file, size } = found;
  if (requested.searchParams.has(FRAME_QUERY) && contentTypeFor(file).startsWith("text/html")) {
    await serveFrame(file, req, res);
    return;
  }
  const headers = { "cache-control": "no-cache", "x-content-type-options": "nosniff", ...cors };
  if (REWRITTEN_TYPES.test(contentTypeFor(file)) && size <= MAX_REWRITTEN_BYTES) {
    const text = await readFile(file, "utf8");
    if (new RegExp(CDN_URL_IN_TEXT.source, "i").test(text)) {
      const body = Buffer.from(rewriteCdnUrls(text, PREVIEW_LIBRARY_PATH), "utf8");
      res.writeHead(200, {
        "content-type": contentTypeFor(file),
        "content-length": body.length,
        ...headers,
      });
      res.end(req.method === "HEAD" ? undefined : body);
      return;
    }
  }
  sendFile(req, res, file, size, headers);
}

/**
 * Project files whose CDN URLs are pointed at the local copies, as the frame document's are: a
 * stylesheet's `@import`/`url()` and a script file's string literals (a render answers those URLs
 * from the same copies through its network policy). Answered whole, without Range.
 */
const REWRITTEN_TYPES = /^(text\/css|text\/javascript|application\/javascript)\b/;
const MAX_REWRITTEN_BYTES = 8 * 1024 * 1024;

export class PreviewServers {
  private readonly servers = new Map<string, Promise<LoopbackServer>>();

  /** The URL that shows `composition` of the project at `dir`. */
  async urlFor(dir: string, composition: string): Promise<string> {
    const root = await realpath(resolve(dir));
    let entry = this.servers.get(root);
    if (!entry) {
      entry = start(root);
      this.servers.set(root, entry);
      entry.catch(() => this.servers.delete(root));
    }
    const { origin } = await entry;
    return `${origin}/${composition.split("/").map(encodeURIComponent).join("/")}`;
  }

  async close(): Promise<void> {
    const entries = [...this.servers.values()];
    this.servers.clear();
    await Promise.all(entries.map(async (entry) => (await entry.catch(() => undefined))?.close()));
  }
}

function start(root: string): Promise<LoopbackServer> {
  return startLoopbackServer((req, res) => serveFile(root, req, res));
}
