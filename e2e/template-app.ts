// Test harness for templates/preview-render: runs the template as its own process, the way
// `npm start` does (`node --import tsx src/server.ts` in the template's folder), on port 0 with
// a temporary data folder. Inside this repository `svc` is not installed into the template's
// node_modules; TSX_TSCONFIG_PATH points tsx at the repository's tsconfig.json, whose `paths`
// map `svc/<entry>` to the same files as the package's `exports` (a test keeps the two equal).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { expect } from "@playwright/test";
import { probeMedia } from "../src/engine/testing/probe";

export const REPO = resolve(import.meta.dirname, "..");
export const TEMPLATE_DIR = join(REPO, "templates", "preview-render");

/** Settings of the template that must not leak in from the developer's shell. */
const TEMPLATE_ENV = [
  "HOST",
  "PORT",
  "RENDER_MODE",
  "COMPOSITIONS_DIR",
  "DEFAULT_COMPOSITION",
  "DATA_DIR",
  "STORAGE_DIR",
  "WORK_DIR",
  "MAX_CONCURRENT_RENDERS",
  "RENDER_TIME_LIMIT_SECONDS",
  "MAX_BODY_BYTES",
  "S3_BUCKET",
  "S3_PREFIX",
  "S3_URL_EXPIRES_SECONDS",
  "AWS_ENDPOINT_URL",
  "AWS_ENDPOINT_URL_S3",
  "AWS_REGION",
  "AWS_DEFAULT_REGION",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AWS_PROFILE",
  "SVC_API_URL",
  "SVC_API_KEY",
  "SVC_ALIAS_API_KEY",
  "SVC_POLL_INTERVAL_SECONDS",
  "RENDER_API_TOKEN",
  "ALLOW_ANONYMOUS_RENDERS",
  "ALLOWED_ORIGINS",
];

export interface TemplateApp {
  url: string;
  dataDir: string;
  storageDir: string;
  workDir: string;
  child: ChildProcess;
  logs(): string;
  /** Names in the storage folder (dot files, i.e. temp files, included). */
  storedFiles(): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startTemplate(env: Record<string, string> = {}): Promise<TemplateApp> {
  const dataDir = await mkdtemp(join(tmpdir(), "svc-template-test-"));
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of TEMPLATE_ENV) delete childEnv[name];
  Object.assign(childEnv, {
    TSX_TSCONFIG_PATH: join(REPO, "tsconfig.json"),
    PORT: "0",
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    ...env,
  });
  // Its own process group, so a failed test can take down the server and its sandboxes at once.
  const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
    cwd: TEMPLATE_DIR,
    env: childEnv,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolveExit) => child.once("exit", () => resolveExit()));
  const listening = new Promise<string>((resolveUrl, reject) => {
    const deadline = setTimeout(
      () => reject(new Error(`template did not start:\n${output}`)),
      60_000,
    );
    const check = () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (!match) return;
      clearTimeout(deadline);
      child.stdout!.off("data", check);
      resolveUrl(match[1]!);
    };
    child.stdout!.on("data", check);
    // "close", not "exit": by then everything it printed has been read.
    child.once("close", (code) => {
      clearTimeout(deadline);
      reject(new Error(`template exited with ${code} before listening:\n${output}`));
    });
  });
  const url = await listening.catch(async (error: unknown) => {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  });
  const storageDir = env.STORAGE_DIR ?? join(dataDir, "renders");
  return {
    url,
    dataDir,
    storageDir,
    workDir: env.WORK_DIR ?? join(dataDir, "work"),
    child,
    logs: () => output,
    storedFiles: async () => (await readdir(storageDir).catch(() => [] as string[])).sort(),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const force = setTimeout(() => killGroup(child), 20_000);
        await exited;
        clearTimeout(force);
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // gone
  }
}

/** JSON over HTTP, with the status and headers; the body parsed when it is JSON. */
export async function call(
  app: { url: string },
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ status: number; headers: Headers; body: any; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${app.url}${path}`, {
    method,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const ms = performance.now() - started;
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, body: parsed, ms };
}

/** Processes whose command line mentions `marker` (Linux), e.g. a sandbox's leftovers. */
export async function processesNaming(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(marker)) found.push(Number(pid));
  }
  return found;
}

/** GET /api/render/:id until it is no longer 202; returns the answer and how many 202s came first. */
export async function waitForResult(app: TemplateApp, callId: string) {
  let running = 0;
  const deadline = Date.now() + 150_000;
  for (;;) {
    const answer = await call(app, "GET", `/api/render/${callId}`);
    if (answer.status !== 202) return { answer, running };
    expect(answer.body).toMatchObject({ call_id: callId, status: "running" });
    running++;
    if (Date.now() > deadline) throw new Error(`render ${callId} still running`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Downloads a stored video and reads it with ffprobe: its video stream, duration and bytes. */
export async function probeStored(app: TemplateApp, url: string) {
  const response = await fetch(`${app.url}${url}`);
  expect(response.status).toBe(200);
  const bytes = Buffer.from(await response.arrayBuffer());
  const dir = await mkdtemp(join(tmpdir(), "svc-template-dl-"));
  try {
    const file = join(dir, url.split("/").pop()!);
    await writeFile(file, bytes);
    const info = await probeMedia(file);
    const video = info.streams.find((stream) => stream.type === "video");
    return { video, durationSeconds: info.durationSeconds, bytes };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A compositions folder with "long": the bundled composition lasting 600 s. */
export async function longComposition(): Promise<string> {
  const compositions = await mkdtemp(join(tmpdir(), "svc-template-long-"));
  await mkdir(join(compositions, "long"));
  const card = await readFile(
    join(TEMPLATE_DIR, "compositions", "title-card", "index.html"),
    "utf8",
  );
  await writeFile(
    join(compositions, "long", "index.html"),
    card.replace('data-duration="3"', 'data-duration="600"'),
  );
  return compositions;
}
