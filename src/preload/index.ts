// Preload: exposes exactly the typed IPC contract to the sandboxed renderer, nothing else.
import { contextBridge, ipcRenderer } from "electron";
import { createDesktopBridge } from "./bridge";

contextBridge.exposeInMainWorld("svcDesktop", createDesktopBridge(ipcRenderer));
