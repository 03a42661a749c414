// Preload: exposes exactly the typed IPC contract to the sandboxed renderer, plus the one thing
// only a preload can do: the disk path of a file or folder dropped on the window
// (`webUtils.getPathForFile`; the page itself sees a File without a path).
import { contextBridge, ipcRenderer, webUtils } from "electron";
import type { DroppedFiles } from "../shared/ipc";
import { createDesktopBridge } from "./bridge";

contextBridge.exposeInMainWorld("svcDesktop", createDesktopBridge(ipcRenderer));
contextBridge.exposeInMainWorld("svcDroppedFiles", {
  pathFor: (file: File) => webUtils.getPathForFile(file) || undefined,
} satisfies DroppedFiles);
