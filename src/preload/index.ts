// Preload: exposes exactly the typed IPC contract to the sandboxed renderer, nothing else.
import { contextBridge, ipcRenderer } from "electron";

contextBridge.exposeInMainWorld("svcDesktop", {
  hello: (): Promise<{ app: string; version: string }> => ipcRenderer.invoke("svc:hello"),
});
