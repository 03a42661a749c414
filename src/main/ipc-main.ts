// The Electron transport's main-process half, written against the small part of Electron's API it
// uses (so it runs, and is tested, without the Electron binary): one `ipcMain.handle` channel for
// every method, refusing senders that are not the app's own page, and one channel on which the
// router's events are sent to the window in the order they happened.
import { IPC_EVENT_CHANNEL, IPC_INVOKE_CHANNEL, type IpcResult } from "../shared/ipc";
import type { IpcRouter } from "./ipc-router";

export interface IpcInvokeEventLike {
  senderFrame?: { url: string } | null;
}

export interface IpcMainLike {
  handle(
    channel: string,
    listener: (event: IpcInvokeEventLike, ...args: unknown[]) => unknown,
  ): void;
  removeHandler(channel: string): void;
}

export interface EventTargetLike {
  send(channel: string, ...args: unknown[]): void;
  isDestroyed?(): boolean;
}

export interface ConnectOptions {
  /** True for the URL of the app's own page (file:// of the built renderer, or the dev server). */
  isTrustedSender(url: string): boolean;
  /** Where events go (the main window's webContents), or undefined while there is none. */
  target(): EventTargetLike | undefined;
}

export function connectIpcMain(
  ipcMain: IpcMainLike,
  router: IpcRouter,
  options: ConnectOptions,
): () => void {
  ipcMain.handle(IPC_INVOKE_CHANNEL, async (event, method, input): Promise<IpcResult<unknown>> => {
    const url = event.senderFrame?.url;
    if (!url || !options.isTrustedSender(url)) {
      return {
        ok: false,
        error: { code: "forbidden_sender", message: "This page may not use the app's services." },
      };
    }
    return router.invoke(String(method), input);
  });
  const unsubscribe = router.events.subscribe((message) => {
    const target = options.target();
    if (target && !target.isDestroyed?.()) target.send(IPC_EVENT_CHANNEL, message);
  });
  return () => {
    unsubscribe();
    ipcMain.removeHandler(IPC_INVOKE_CHANNEL);
  };
}
