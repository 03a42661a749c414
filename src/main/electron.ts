// Electron main process: one window with the hardened defaults of SPEC.md section 7
// (contextIsolation, sandboxed renderer, no Node, external links in the system browser).
// Everything that is not Electron-specific lives in plain-Node modules beside this file.
import { join } from "node:path";
import { app, BrowserWindow, ipcMain, shell } from "electron";

const APP_VERSION = app.getVersion();

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
  window.once("ready-to-show", () => window.show());
  window.webContents.setWindowOpenHandler(({ url }) => {
    if (/^https?:\/\//.test(url)) void shell.openExternal(url);
    return { action: "deny" };
  });
  window.webContents.on("will-navigate", (event) => event.preventDefault());
  void window.loadFile(join(__dirname, "../renderer/index.html"));
}

ipcMain.handle("svc:hello", (event) => {
  if (!event.senderFrame?.url.startsWith("file://")) throw new Error("refused: unknown sender");
  return { app: "svc Desktop", version: APP_VERSION };
});

void app.whenReady().then(() => {
  createWindow();
  app.on("activate", () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });
});

app.on("window-all-closed", () => {
  if (process.platform !== "darwin") app.quit();
});
