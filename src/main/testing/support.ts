// Test support for the desktop main process (used only by src/main/*.test.ts): the real render
// service as a child process, a counting HTTP proxy in front of it, tiny compositions, the app's
// services in this process or in a child process (waiting on conditions: src/shared/testing).
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { IpcCallError } from "../../shared/ipc";
import { waitFor } from "../../shared/testing/wait-for";

export const REPO = resolve(import.meta.dirname, "../../..");
const SVC_BIN = join(REPO, "bin", "svc.js");

export function tempDir(prefix = "svc-desktop-test-"): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** The IpcCallError `promise` fails with; anything else (or success) fails the test. */
export async function ipcFailure(promise: Promise<unknown>): Promise<IpcCallError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof IpcCallError) return error;
    throw error;
  }
  throw new Error("expected the call to fail");
}

/** Environment for child processes: PATH and the browser override, plus `extra`. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? tmpdir(),
    ...(process.env.SVC_CHROMIUM_PATH ? { SVC_CHROMIUM_PATH: process.env.SVC_CHROMIUM_PATH } : {}),
    ...extra,
  };
}

export interface TestService {
  url: string;
  apiKey: string;
  dataDir: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** `svc server` on a free port with its own data dir; resolves when it is ready. */
export async function startService(
  dataDir: string,
  env: Record<string, string> = {},
): Promise<TestService> {
  const child = spawn(process.execPath, [SVC_BIN, "server", "--port", "0", "--data-dir", dataDir], {
    env: childEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let errors = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (errors += chunk));
  const url = await new Promise<string>((resolveUrl, reject) => {
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
      const match = /svc server listening on (http:\/\/\S+)/.exec(output);
      if (match) resolveUrl(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`svc server exited (${code}): ${errors}`)));
  });
  await waitFor("the service to be ready", async () =>
    (await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    ))
      ? true
      : undefined,
  );
  const { api_key: apiKey } = JSON.parse(await readFile(join(dataDir, "credentials"), "utf8")) as {
    api_key: string;
  };
  return {
    url,
    apiKey,
    dataDir,
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    },
  };
}

export interface CountingProxy {
  url: string;
  setUpstream(url: string): void;
  /** Requests seen, by "METHOD /path-prefix" (storage downloads as "GET video"). */
  count(kind: "GET video" | "POST /v3/svc/renders" | "POST /v3/assets"): number;
  /**
   * Holds the service's answer to the next submit (POST /v3/svc/renders): `answered` resolves
   * with its body once the service has answered (the render exists), `release` passes it on.
   */
  holdNextSubmit(): { answered: Promise<string>; release: () => void };
  close(): Promise<void>;
}

/** An HTTP proxy in front of the real service that counts what passes through it. */
export async function startCountingProxy(): Promise<CountingProxy> {
  let upstream = "";
  const counts = new Map<string, number>();
  let hold: { answered: (body: string) => void; released: Promise<void> } | undefined;
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const kind =
      req.method === "GET" && path.startsWith("/storage/renders/") && /\.(mp4|webm|mov)$/.test(path)
        ? "GET video"
        : `${req.method} ${path}`;
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
    const target = new URL(req.url ?? "/", upstream);
    const forward = httpRequest(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host } },
      (up) => {
        const held = kind === "POST /v3/svc/renders" ? hold : undefined;
        if (!held) {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
          return;
        }
        hold = undefined;
        const chunks: Buffer[] = [];
        up.on("data", (chunk: Buffer) => chunks.push(chunk));
        up.on("end", () => {
          const body = Buffer.concat(chunks);
          held.answered(body.toString());
          void held.released.then(() => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            res.end(body);
          });
        });
      },
    );
    forward.on("error", () => req.socket.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setUpstream: (url) => (upstream = url),
    count: (kind) => counts.get(kind) ?? 0,
    holdNextSubmit: () => {
      let answered!: (body: string) => void;
      let release!: () => void;
      const answer = new Promise<string>((resolve) => (answered = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      hold = { answered, released };
      return { answered: answer, release };
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A 1920x1080 composition one second long, with a `title` variable. */
export function tinyComposition(label: string): string {
  const variables = JSON.stringify([
    { id: "title", type: "string", label: "Title", default: label, maxLength: 20 },
  ]);
  return `<!doctype html>
<html data-composition-variables='${variables}'><head><meta charset="utf-8"><style>
html, body { margin: 0; background: #203040; color: white; font: 120px sans-serif; }
</style></head>
<body><div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="1">
<p data-var-text="title">${label}</p></div></body></html>
`;
}

export async function writeProject(root: string, files: Record<string, string>): Promise<string> {
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(root, name, ".."), { recursive: true });
    await writeFile(join(root, name), content);
  }
  return root;
}

/** The HTTP status of a GET that names `host` in its Host header (as a DNS-rebinding page would). */
export function statusWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolveStatus, reject) => {
    const req = httpRequest(url, { headers: { host } }, (res) => {
      res.resume();
      resolveStatus(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

/** A system opener that records what it was asked to open (there is no desktop in a test run). */
export function recordingOpener(): {
  opened: string[];
  open: (target: string) => Promise<boolean>;
} {
  const opened: string[] = [];
  return {
    opened,
    open: async (target) => {
      opened.push(target);
      return true;
    },
  };
}

/** Render settings small enough for a 2-core machine: one second at 2 fps, draft quality. */
export const TINY_RENDER = {
  fps: 2,
  quality: "draft" as const,
  format: "mp4" as const,
  resolution: "1080p" as const,
};
