// Test support for the cloud commands (used only by *.test.ts): the real `svc` binary run as a
// child process in a chosen folder and environment, tiny compositions written to disk, counts
// read through the service's own database code (src/server/db), and a fault-injection HTTP
// proxy that sits between the client and the real service and can drop or stall one request.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openSqliteDatabase } from "../../server/db/sqlite";
import { fromMilli } from "../../server/render/credits";
import { runAction } from "../command";
import { recordingIo, type CliIo } from "../io";

const REPO = resolve(import.meta.dirname, "../../..");
const BIN = join(REPO, "bin/svc.js");

export async function tempDir(prefix = "svc-cloud-test-"): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export interface CliRun {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number>;
}

/** Starts `svc ...args` in `cwd`; the environment is exactly `env` plus PATH and a few basics. */
export function startCli(
  args: string[],
  options: { cwd: string; env: Record<string, string>; stdin?: string },
): CliRun {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH ?? "",
      NODE_OPTIONS: process.env.NODE_OPTIONS ?? "",
      ...options.env,
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  child.stdin!.end(options.stdin ?? "");
  const exited = new Promise<number>((resolveExit) =>
    child.on("exit", (code, signal) => resolveExit(code ?? (signal ? 128 : 1))),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

export async function runCli(
  args: string[],
  options: { cwd: string; env: Record<string, string>; stdin?: string },
): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = startCli(args, options);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** A 1920x1080 composition `seconds` long whose look depends on `label`. */
export function tinyComposition(
  label: string,
  options: { seconds?: number; variables?: unknown[]; width?: number; height?: number } = {},
): string {
  const variables = options.variables
    ? ` data-composition-variables='${JSON.stringify(options.variables).replace(/'/g, "&#39;")}'`
    : "";
  return `<!doctype html>
<html${variables}><head><meta charset="utf-8"><style>
html, body { margin: 0; background: #203040; color: white; font: 120px sans-serif; }
</style></head>
<body><div id="root" data-composition-id="main" data-width="${options.width ?? 1920}" data-height="${options.height ?? 1080}" data-duration="${options.seconds ?? 1}">
<p data-var-text="title">${label}</p></div></body></html>
`;
}

export async function writeProject(
  root: string,
  files: Record<string, string | Buffer>,
): Promise<string> {
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(root, name, ".."), { recursive: true });
    await writeFile(join(root, name), content);
  }
  return root;
}

/**
 * A socket that answers every request with 500 and counts them: a command pointed at it that was
 * refused before any upload leaves the count where it was.
 */
export async function startRequestCounter(): Promise<{
  url: string;
  requests(): number;
  close(): Promise<void>;
}> {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.writeHead(500).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** What the service holds, read through its own database seam (src/server/db) and schema. */
export async function serviceCounts(dataDir: string): Promise<{
  assets: number;
  renders: number;
  creditsUsed: number;
}> {
  const db = await openSqliteDatabase(join(dataDir, "svc.db"));
  try {
    const [assets, renders, used] = await Promise.all([
      db
        .selectFrom("assets")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirst(),
      db
        .selectFrom("renders")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirst(),
      db
        .selectFrom("users")
        .select((eb) => eb.fn.sum<number>("credits_used_milli").as("n"))
        .executeTakeFirst(),
    ]);
    return {
      assets: Number(assets?.n ?? 0),
      renders: Number(renders?.n ?? 0),
      creditsUsed: fromMilli(Number(used?.n ?? 0)),
    };
  } finally {
    await db.destroy();
  }
}

export type FaultStep = "create" | "put" | "complete" | "submit" | "poll" | "download";

export type FaultAction = "drop" | "stall";

/** Which step a request belongs to. */
export function stepOf(method: string, url: string): FaultStep | undefined {
  const path = url.split("?")[0]!;
  if (method === "POST" && path === "/v3/assets") return "create";
  if (method === "PUT" && path.startsWith("/storage/uploads/")) return "put";
  if (method === "POST" && /^\/v3\/assets\/[^/]+\/complete$/.test(path)) return "complete";
  if (method === "POST" && path === "/v3/svc/renders") return "submit";
  if (method === "GET" && /^\/v3\/svc\/renders\/[^/]+$/.test(path)) return "poll";
  if (method === "GET" && path.startsWith("/storage/renders/") && /\.(mp4|webm|mov)$/.test(path)) {
    return "download";
  }
  return undefined;
}

export interface FaultProxy {
  url: string;
  setUpstream(url: string): void;
  /** The next request of `step` is dropped (after the service answered) or stalled. */
  arm(step: FaultStep, action: FaultAction): void;
  /** How many faults were injected per step, and requests seen per step. */
  injected: Record<string, number>;
  seen: Record<string, number>;
  /** Downloads that asked for a byte range (a resumed download). */
  readonly rangeRequests: number;
  /** Requests being held by a stall. */
  stalled(): number;
  close(): Promise<void>;
}

/**
 * HTTP proxy in front of the real service. "drop": the request reaches the service, its answer is
 * thrown away and the client's connection is destroyed (for downloads: after half the body);
 * "stall": the request is held and never answered (for downloads: after the first chunk).
 */
export async function startFaultProxy(): Promise<FaultProxy> {
  let upstream = "";
  const armed = new Map<FaultStep, FaultAction>();
  const injected: Record<string, number> = {};
  const seen: Record<string, number> = {};
  let stalled = 0;
  let rangeRequests = 0;
  const server: Server = createServer((req, res) => {
    const step = stepOf(req.method ?? "GET", req.url ?? "/");
    if (step) seen[step] = (seen[step] ?? 0) + 1;
    if (step === "download" && req.headers.range) rangeRequests++;
    const action = step ? armed.get(step) : undefined;
    if (step && action) {
      armed.delete(step);
      injected[step] = (injected[step] ?? 0) + 1;
    }
    if (action === "stall" && step !== "download") {
      stalled++;
      req.resume();
      req.socket.once("close", () => stalled--);
      return;
    }
    const target = new URL(req.url ?? "/", upstream);
    const forward = httpRequest(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host } },
      (upstreamRes: IncomingMessage) => {
        if (action === "drop" && step !== "download") {
          // The service did the work; the client never hears about it.
          upstreamRes.resume();
          upstreamRes.on("end", () => req.socket.destroy());
          return;
        }
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        if (action && step === "download") {
          // Pass the first half of the body (at most), then cut the connection or hold it.
          const half = Math.floor(Number(upstreamRes.headers["content-length"] ?? 0) / 2);
          let sent = 0;
          upstreamRes.on("data", (chunk: Buffer) => {
            if (sent >= half) return;
            const part = chunk.subarray(0, half - sent);
            sent += part.length;
            if (sent < half) {
              res.write(part);
              return;
            }
            if (action === "drop") {
              // Cut the connection once the first half has left this process.
              upstreamRes.destroy();
              res.write(part, () => req.socket.destroy());
              return;
            }
            res.write(part);
            upstreamRes.pause();
            stalled++;
            req.socket.once("close", () => {
              stalled--;
              upstreamRes.destroy();
            });
          });
          return;
        }
        upstreamRes.pipe(res);
      },
    );
    forward.on("error", () => req.socket.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    setUpstream: (url) => (upstream = url),
    arm: (step, action) => armed.set(step, action),
    injected,
    seen,
    get rangeRequests() {
      return rangeRequests;
    },
    stalled: () => stalled,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Runs `svc ...args` inside the test process (the same program and error mapping as bin/svc.js,
 * without paying for a Node start per case) with its own streams and `env` laid over the test's
 * environment: nothing global is patched.
 */
export async function runInProcess(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { CommanderError } = await import("commander");
  const { buildProgram } = await import("../program");
  const { reportError } = await import("../errors");
  const io = recordingIo(withEnv(env));
  try {
    await (await buildProgram(io)).parseAsync(["node", "svc", ...args]);
  } catch (error) {
    if (error instanceof CommanderError) io.exitCode = 2;
    else reportError(error, args.includes("--json"), io);
  }
  return { code: io.exitCode, stdout: io.out(), stderr: io.err() };
}

/**
 * Runs one command's `run<Verb>(options, io)` in this process with a recording IO over this
 * process's environment plus `env` (undefined removes a variable), reporting a failure as its
 * command does (runAction: one error line, or `{error}` with `json`, and the exit code). The
 * result is what run<Verb> returned (undefined when it failed).
 */
export async function runVerb<T>(
  env: Record<string, string | undefined>,
  run: (io: CliIo) => Promise<T>,
  options: { json?: boolean } = {},
): Promise<{ code: number; stdout: string; stderr: string; result: T | undefined }> {
  const io = recordingIo(withEnv(env));
  let result: T | undefined;
  await runAction(io, options.json, async () => {
    result = await run(io);
  });
  return { code: io.exitCode, stdout: io.out(), stderr: io.err(), result };
}

function withEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete merged[name];
    else merged[name] = value;
  }
  return merged;
}

/**
 * Runs `svc ...args` on a real pseudo-terminal (util-linux `script`), typing `reply` once
 * `prompt` appears. Returns everything the terminal showed, so a test can check what was echoed.
 */
export async function runInTerminal(
  args: string[],
  options: { cwd: string; env: Record<string, string>; prompt: string; reply: string },
): Promise<{ code: number; screen: string }> {
  const command = [process.execPath, BIN, ...args].map(
    (part) => `'${part.replace(/'/g, "'\\''")}'`,
  );
  const child = spawn("script", ["-qfec", command.join(" "), "/dev/null"], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? "", TERM: "dumb", ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let screen = "";
  let replied = false;
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    screen += chunk;
    if (!replied && screen.includes(options.prompt)) {
      replied = true;
      child.stdin!.write(options.reply);
    }
  });
  const code = await new Promise<number>((r) => child.on("exit", (c) => r(c ?? 1)));
  child.stdin!.end();
  return { code, screen };
}
