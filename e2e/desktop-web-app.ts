// Test harness for the desktop UI: a real `svc server` (port 0, its own data dir) and the desktop
// app in web mode (`scripts/launch.mjs --web`) with temporary app data, credential and downloads
// folders, pointed at that service, and the folder browser rooted at this repository. The app
// can be killed and started again on the same data (`restartApp`), as after a crash.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { startService, tempDir, type TestService } from "../src/main/testing/support";

export const REPO = resolve(import.meta.dirname, "..");

export interface WebApp {
  /** The app's URL (with a new token after `restartApp`). */
  url: string;
  service: TestService;
  downloadsDir: string;
  /** SIGKILLs the app (the service keeps running) and starts it again on the same data. */
  restartApp(): Promise<void>;
  stop(): Promise<void>;
}

/** The app in web mode; resolves once it printed its URL. */
async function launchApp(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child: ChildProcess = spawn(process.execPath, ["scripts/launch.mjs", "--web"], {
    cwd: REPO,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    let stdout = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+)/.exec(stdout);
      if (match) resolveUrl(match[1]!);
    });
    child.once("exit", (code) =>
      reject(new Error(`web mode exited (${code}) before printing a URL:\n${stderr}`)),
    );
  });
  return { child, url };
}

async function stopApp(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill(signal);
  await exited;
}

/** `env`: extra environment for the app (e.g. SVC_FILE_OPENER); `settings`: over the defaults. */
export async function startWebApp(
  options: { env?: Record<string, string>; settings?: Record<string, unknown> } = {},
): Promise<WebApp> {
  const scratch = await tempDir("svc-desktop-ui-");
  const service = await startService(join(scratch, "service"));
  const appData = join(scratch, "app");
  const downloadsDir = join(scratch, "downloads");
  await mkdir(appData, { recursive: true });
  await writeFile(
    join(appData, "settings.json"),
    JSON.stringify({
      service: service.url,
      downloadsDir,
      concurrency: 1,
      credentialStore: "file",
      folderBrowserRoot: REPO,
      ...options.settings,
    }),
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SVC_NO_OPEN: "1",
    SVC_DESKTOP_DATA_DIR: appData,
    SVC_CONFIG_DIR: join(scratch, "config"),
    ...options.env,
  };
  for (const name of [
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "SVC_API_KEY",
    "SVC_ALIAS_API_KEY",
    "SVC_API_URL",
  ])
    delete env[name];
  let app = await launchApp(env);
  const webApp: WebApp = {
    url: app.url,
    service,
    downloadsDir,
    restartApp: async () => {
      await stopApp(app.child, "SIGKILL");
      app = await launchApp(env);
      webApp.url = app.url;
    },
    stop: async () => {
      await stopApp(app.child, "SIGTERM");
      await service.stop();
      await rm(scratch, { recursive: true, force: true });
    },
  };
  return webApp;
}

/** Calls one of the app's IPC methods as its page does in web mode (the token from its URL). */
export async function appIpc<T>(app: WebApp, method: string, input: unknown = {}): Promise<T> {
  const url = new URL(app.url);
  const token = new URLSearchParams(url.hash.slice(1)).get("token");
  const response = await fetch(`${url.origin}/api/ipc/${method}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  const result = (await response.json()) as { ok: true; data: T } | { ok: false; error: unknown };
  if (!result.ok) throw new Error(`${method}: ${JSON.stringify(result.error)}`);
  return result.data;
}
