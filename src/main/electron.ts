// Electron main process: one window with the hardened defaults of SPEC.md section 7
// (contextIsolation, sandboxed renderer, no Node, external links in the system browser; the strict
// CSP is the renderer's own meta tag, which also governs file://) and the IPC channel with its
// sender check. Everything that is not Electron-specific
// lives in plain-Node modules beside this file (desktop-app.ts wires them).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { app, BrowserWindow, ipcMain, shell } from "electron";
import { desktopDataDir, startDesktopApp, type DesktopApp } from "./desktop-app";
import { createElectronFileHost, createElectronHost } from "./electron-host";
import { connectIpcMain } from "./ipc-main";

const RENDERER_DIR = join(__dirname, "../renderer");
const RENDERER_URL = pathToFileURL(join(RENDERER_DIR, "index.html")).href;

let mainWindow: BrowserWindow | undefined;
let services: DesktopApp | undefined;

function createWindow(): void {
  const window = new BrowserWindow({
    width: 1200,
    height: 800,
    minWidth: 1024,
    minHeight: 700,
    title: "svc Desktop",
    show: false,
    webPreferences: {
      preload: join(__dirname, "../preload/index.cjs"),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    },
  });
  mainWindow = window;
  window.once("ready-to-show", () => window.show());
  window.on("closed", () => (mainWindow = undefined));
  window.webContents.setWindowOpenHandler(({ url }) => {
    if (/^https?:\/\//.test(url)) void shell.openExternal(url);
    return { action: "deny" };
  });
  window.webContents.on("will-navigate", (event) => event.preventDefault());
  void window.loadFile(join(RENDERER_DIR, "index.html"));
}

void app.whenReady().then(async () => {
  services = await startDesktopApp({
    appRoot: join(__dirname, "../.."),
    version: app.getVersion(),
    dataDir: desktopDataDir(process.env, app.getPath("userData")),
    host: createElectronHost(() => mainWindow),
    files: createElectronFileHost(() => mainWindow),
  });
  connectIpcMain(ipcMain, services.router, {
    isTrustedSender: (url) => url === RENDERER_URL || url.startsWith(`${RENDERER_URL}#`),
    target: () => mainWindow?.webContents,
  });
  createWindow();
  app.on("activate", () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });
});

app.on("window-all-closed", () => {
  if (process.platform !== "darwin") app.quit();
});

let quitting = false;
app.on("before-quit", (event) => {
  // Stop the job queue (jobs resume next start) and the embedded service before exiting.
  if (quitting || !services) return;
  event.preventDefault();
  quitting = true;
  void services.close().finally(() => app.quit());
});
