// The preload's bridge object, built from `ipcRenderer` (passed in, so this file has no Electron
// import and is tested with an in-process fake): exactly one function per method of the IPC
// contract plus `on` for its events. Nothing else of Electron or Node reaches the page.
import type { DesktopBridge, IpcEventMessage, IpcResult } from "../shared/ipc";
import { IPC_EVENT_CHANNEL, IPC_INVOKE_CHANNEL, IPC_METHOD_NAMES } from "../shared/ipc-channels";

export interface IpcRendererLike {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
  removeListener(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
}

export function createDesktopBridge(ipcRenderer: IpcRendererLike): DesktopBridge {
  const bridge: Record<string, unknown> = {};
  for (const method of IPC_METHOD_NAMES) {
    bridge[method] = (input?: unknown) =>
      ipcRenderer.invoke(IPC_INVOKE_CHANNEL, method, input) as Promise<IpcResult<unknown>>;
  }
  bridge.on = (event: string, listener: (payload: unknown) => void) => {
    const forward = (_event: unknown, message: unknown) => {
      const { event: name, payload } = message as IpcEventMessage;
      if (name === event) listener(payload);
    };
    ipcRenderer.on(IPC_EVENT_CHANNEL, forward);
    return () => void ipcRenderer.removeListener(IPC_EVENT_CHANNEL, forward);
  };
  return bridge as DesktopBridge;
}
