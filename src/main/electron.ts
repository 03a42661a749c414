// Electron main process: one window with the hardened defaults of SPEC.md section 7
// (contextIsolation, sandboxed renderer, no Node, external links in the system browser; the strict
// CSP is the renderer's own meta tag, which also governs file://) and the IPC channel with its
// sender check. Everything that is not Electron-specific
// lives in plain-Node modules beside this file (desktop-app.ts wires them).
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { app, BrowserWindow, ipcMain, session } from "electron";
import { desktopDataDir, startDesktopApp, type DesktopApp } from "./desktop-app";
import { createElectronFileHost, createElectronHost, openInBrowser } from "./electron-host";
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
      // Middle-click would open links in new windows outside the window-open handler.
      disableBlinkFeatures: "Auxclick",
    },
  });
  mainWindow = window;
  window.once("ready-to-show", () => window.show());
  window.on("closed", () => (mainWindow = undefined));
  window.webContents.setWindowOpenHandler(({ url }) => {
    void openInBrowser(url);
    return { action: "deny" };
  });
  window.webContents.on("will-navigate", (event) => event.preventDefault());
  void window.loadFile(join(RENDERER_DIR, "index.html"));
}

/**
 * No web permission (camera, notifications, geolocation, ...) for any page, the previewed
 * compositions included; the app's own page may write to the clipboard (its "Copy" buttons).
 */
function denyPermissions(): void {
  const allowed = (permission: string, url: string | undefined) =>
    permission === "clipboard-sanitized-write" && url !== undefined && isAppPage(url);
  session.defaultSession.setPermissionRequestHandler((_contents, permission, callback, details) =>
    callback(allowed(permission, details.requestingUrl)),
  );
  session.defaultSession.setPermissionCheckHandler((_contents, permission, _origin, details) =>
    allowed(permission, details.requestingUrl),
  );
}

function isAppPage(url: string): boolean {
  return url === RENDERER_URL || url.startsWith(`${RENDERER_URL}#`);
}

void app.whenReady().then(async () => {
  denyPermissions();
  services = await startDesktopApp({
    appRoot: join(__dirname, "../.."),
    version: app.getVersion(),
    dataDir: desktopDataDir(process.env, app.getPath("userData")),
    host: createElectronHost(() => mainWindow),
    files: createElectronFileHost(() => mainWindow),
  });
  connectIpcMain(ipcMain, services.router, {
    isTrustedSender: isAppPage,
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
  // Stop the render queue (queued renders resume next start) and the embedded service before
  // exiting.
  if (quitting || !services) return;
  event.preventDefault();
  quitting = true;
  void services.close().finally(() => app.quit());
});
