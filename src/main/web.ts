// Web mode entry: the desktop app's services for a browser. Options come from the environment
// so the launcher passes them through unchanged: SVC_WEB_HOST (default 127.0.0.1), SVC_WEB_PORT
// (default: a free port) and SVC_DESKTOP_DATA_DIR (default ~/.svc/desktop).
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { desktopDataDir, startDesktopApp } from "./desktop-app";
import { createWebHost } from "./host";
import { defaultIconFile, defaultRendererDir, startWebServer, type WebServer } from "./web-server";

export async function runWebMode(
  projectRoot: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<WebServer> {
  const { version } = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as {
    version: string;
  };
  const home = env.HOME?.trim() || homedir();
  // The host is created before the settings are loaded: it reads the folder root when asked.
  let folderRoot = (): string => home;
  const app = await startDesktopApp({
    appRoot: projectRoot,
    version,
    dataDir: desktopDataDir(env, join(home, ".svc", "desktop")),
    env,
    home,
    host: createWebHost({ folderRoot: () => folderRoot() }),
  });
  folderRoot = () => app.settings.get().folderBrowserRoot ?? home;
  const rendererDir = defaultRendererDir(projectRoot);
  const server = await startWebServer({
    version,
    host: env.SVC_WEB_HOST || "127.0.0.1",
    port: env.SVC_WEB_PORT ? Number(env.SVC_WEB_PORT) : 0,
    router: app.router,
    iconFile: defaultIconFile(projectRoot),
    ...(existsSync(rendererDir) ? { rendererDir } : {}),
  });
  return {
    ...server,
    close: async () => {
      await server.close();
      await app.close();
    },
  };
}
