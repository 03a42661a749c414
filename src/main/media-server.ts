// Inline playback of downloaded videos (Queue and History): a read-only HTTP server on 127.0.0.1
// that serves exactly the files the render queue handed it, each under an unguessable URL
// (`/media/<random token>/<name>`), with Range requests so the <video> element can seek. The
// renderer never names a path: it asks by queued render (`media.url`), the manager checks the file
// lies in that queued render's output folder, and only then is a URL issued. The server, its Host
// check (DNS rebinding) and Range answers are src/node/static-files.ts. Electron's window and web
// mode both play from here, so there is one implementation.
import { randomBytes } from "node:crypto";
import { realpath, stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { basename } from "node:path";
import { sendFile, startLoopbackServer, type LoopbackServer } from "../node/index";

/** URLs handed out are kept this long, then forgotten (a page asks again for a new one). */
const URL_LIFETIME_MS = 6 * 60 * 60 * 1000;
const MAX_URLS = 2000;

export class MediaServer {
  private server: Promise<LoopbackServer> | undefined;
  private readonly files = new Map<string, { file: string; expiresAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A URL that plays `file` (an absolute path the caller has checked). */
  async urlFor(file: string): Promise<string> {
    const real = await realpath(file);
    const { origin } = await this.start();
    this.forgetExpired();
    const token = randomBytes(24).toString("base64url");
    this.files.set(token, { file: real, expiresAt: this.now() + URL_LIFETIME_MS });
    return `${origin}/media/${token}/${encodeURIComponent(basename(real))}`;
  }

  async close(): Promise<void> {
    const running = this.server;
    this.server = undefined;
    this.files.clear();
    await (await running?.catch(() => undefined))?.close();
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [token, entry] of this.files) if (entry.expiresAt <= now) this.files.delete(token);
    while (this.files.size >= MAX_URLS) this.files.delete(this.files.keys().next().value!);
  }

  private start(): Promise<LoopbackServer> {
    this.server ??= startLoopbackServer((req, res) => this.serve(req, res));
    return this.server;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const token = /^\/media\/([\w-]+)\//.exec(new URL(req.url ?? "/", "http://x").pathname)?.[1];
    const entry = token ? this.files.get(token) : undefined;
    const info =
      entry && entry.expiresAt > this.now()
        ? await stat(entry.file).catch(() => undefined)
        : undefined;
    if (!entry || !info?.isFile()) {
      res.writeHead(404, { "content-type": "text/plain" }).end("Not found");
      return;
    }
    sendFile(req, res, entry.file, info.size, {
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    });
  }
}
