// Web mode entry: the desktop app's services for a browser. Options come from the environment
// so the launcher passes them through unchanged: SVC_WEB_HOST (default 127.0.0.1) and
// SVC_WEB_PORT (default: a free port).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { defaultRendererDir, startWebServer, type WebServer } from "./web-server";

export async function runWebMode(projectRoot: string): Promise<WebServer> {
  const { version } = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as {
    version: string;
  };
  const rendererDir = defaultRendererDir(projectRoot);
  return startWebServer({
    version,
    host: process.env.SVC_WEB_HOST || "127.0.0.1",
    port: process.env.SVC_WEB_PORT ? Number(process.env.SVC_WEB_PORT) : 0,
    ...(existsSync(rendererDir) ? { rendererDir } : {}),
  });
}
