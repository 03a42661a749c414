// The desktop app's main-process services, wired once and shared by both transports: settings,
// the service connection (embedded service supervisor or a URL), the render queue, project tools
// (scan, dry run, preview, variables) and the host adapter, behind one `IpcRouter`. Runs in plain
// Node: Electron (electron.ts) and web mode (web.ts) only add a transport and a host. The IPC
// methods live by area: app-handlers, project-handlers, queue-handlers, history-handlers and
// auth-handlers.
import { homedir } from "node:os";
import { join } from "node:path";
import type { DesktopSettings } from "../shared/ipc";
import { LOCAL_SERVICE_PORT } from "../shared/limits";
import { loadClientConfig } from "../core/index";
import { appHandlers } from "./app-handlers";
import { authHandlers } from "./auth-handlers";
import { createSystemFileHost, type FileHost } from "./file-host";
import { Gallery } from "./gallery";
import { historyHandlers } from "./history-handlers";
import type { DesktopHost } from "./host";
import { IpcEventHub, IpcRouter, type IpcHandlers } from "./ipc-router";
import { RenderQueue } from "./render-queue";
import { LocalQuotes } from "./local-quote";
import { MediaServer } from "./media-server";
import { PreviewServers } from "./preview-server";
import { ProjectChecks } from "./project-check";
import { projectHandlers } from "./project-handlers";
import { queueHandlers } from "./queue-handlers";
import { QUEUE_FILE_NAME } from "./queue-file";
import { ServiceConnection } from "./service-connection";
import { ServiceSupervisor } from "./service-supervisor";
import { defaultSettings, SettingsStore } from "./settings-store";

export const APP_NAME = "svc Desktop";
/** Port of the embedded service (SPEC.md section 0): the one the CLI uses too. */

export interface DesktopAppOptions {
  /** The package root (holds bin/svc.js). */
  appRoot: string;
  version: string;
  /** Where settings.json and queue.json live. */
  dataDir: string;
  host: DesktopHost;
  /** Opening videos and choosing images (default: the system opener and the in-app browser). */
  files?: FileHost;
  env?: NodeJS.ProcessEnv;
  home?: string;
  /** Embedded service: port (default 7733), data dir (default ~/.svc/local), extra env. */
  localService?: { port?: number; dataDir?: string; env?: NodeJS.ProcessEnv };
  /** Defaults for settings not yet saved. */
  settingsDefaults?: Partial<DesktopSettings>;
  /** Queued render status polling interval (default 2 s). */
  pollIntervalMs?: number;
  /** The bundled example projects (default: <appRoot>/examples). */
  examplesDir?: string;
  /** The starter templates (default: <appRoot>/gallery). */
  galleryDir?: string;
  /** Where "New video" makes projects (default: the Videos folder of the home folder). */
  videosDir?: string;
}

export interface DesktopApp {
  router: IpcRouter;
  events: IpcEventHub;
  queue: RenderQueue;
  supervisor: ServiceSupervisor;
  settings: SettingsStore;
  close(): Promise<void>;
}

/** The app data dir: SVC_DESKTOP_DATA_DIR, else the given default (Electron's userData). */
export function desktopDataDir(env: NodeJS.ProcessEnv, fallback: string): string {
  return env.SVC_DESKTOP_DATA_DIR?.trim() || fallback;
}

export async function startDesktopApp(options: DesktopAppOptions): Promise<DesktopApp> {
  const env = options.env ?? process.env;
  const home = options.home ?? homedir();
  const clientConfig = loadClientConfig(env);
  const localDataDir = options.localService?.dataDir ?? clientConfig.localDataDir;
  const settings = await SettingsStore.open(join(options.dataDir, "settings.json"), {
    ...defaultSettings(home),
    ...options.settingsDefaults,
  });
  const supervisor = new ServiceSupervisor({
    svcBin: join(options.appRoot, "bin", "svc.js"),
    dataDir: localDataDir,
    port: options.localService?.port ?? LOCAL_SERVICE_PORT,
    ...(options.localService?.env ? { env: options.localService.env } : {}),
  });
  const connection = new ServiceConnection({
    settings,
    supervisor,
    localDataDir,
    configDir: clientConfig.configDir,
    env,
    userAgent: `svc-desktop/${options.version}`,
  });
  const events = new IpcEventHub();
  const { host } = options;
  const files = options.files ?? createSystemFileHost(env);
  const queue = await RenderQueue.open({
    file: join(options.dataDir, QUEUE_FILE_NAME),
    service: connection,
    concurrency: () => settings.get().concurrency,
    downloadsDir: () => settings.get().downloadsDir,
    ...(options.pollIntervalMs ? { pollIntervalMs: options.pollIntervalMs } : {}),
    notify: (notification) => {
      events.emit("notification", notification);
      host.notify(notification);
    },
  });
  const preview = new PreviewServers();
  const checks = new ProjectChecks(join(options.appRoot, "bin", "svc.js"));
  const quotes = new LocalQuotes(join(options.appRoot, "bin", "svc.js"));
  const media = new MediaServer();
  const gallery = new Gallery({
    galleryDir: options.galleryDir ?? join(options.appRoot, "gallery"),
    cacheDir: join(options.dataDir, "gallery-tiles"),
    svcBin: join(options.appRoot, "bin", "svc.js"),
    projectsDir: options.videosDir ?? join(home, "Videos"),
  });

  queue.onUpdate((queuedRender) => events.emit("queuedRender", queuedRender));
  queue.onBatchUpdate((batch) => events.emit("batch", batch));
  supervisor.onState((state) => {
    if (connection.mode === "local") events.emit("service", state);
  });
  settings.onChange((next, previous) => {
    if (next.concurrency !== previous.concurrency) queue.start();
    if (next.service !== previous.service) {
      if (next.service !== "local") void supervisor.stop();
      events.emit("service", connection.state());
    }
  });

  const auth = authHandlers({
    connection,
    host,
    events,
    userAgent: `svc-desktop/${options.version}`,
  });
  const handlers: IpcHandlers = {
    ...appHandlers({
      app: APP_NAME,
      version: options.version,
      appRoot: options.appRoot,
      examplesDir: options.examplesDir,
      home,
      gallery,
      settings,
      connection,
      queue,
      host,
      cancelSignIn: () => auth["auth.cancel"]({}),
    }),
    ...projectHandlers({ preview, checks, quotes, files }),
    ...queueHandlers({ queue, connection, media, files, host }),
    ...historyHandlers({ connection, queue }),
    ...auth,
  };

  queue.start();
  return {
    router: new IpcRouter(handlers, events),
    events,
    queue,
    supervisor,
    settings,
    close: async () => {
      checks.close();
      quotes.close();
      await queue.close();
      await preview.close();
      await media.close();
      await supervisor.stop();
    },
  };
}
