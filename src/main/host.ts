// What the app asks of the desktop around it: a folder dialog, "show in folder", opening a link in
// the system browser, a notification. Electron implements these with its own APIs
// (electron-host.ts); web mode has no native dialog (the renderer shows the in-app folder browser)
// and opens folders and links with the system's opener.
import { startDetached, systemOpenCommand } from "../node/index";
import { stat } from "node:fs/promises";
import { dirname } from "node:path";
import type { QueuedRenderNotification, PickFolderResult } from "../shared/ipc";
import { appError } from "./ipc-errors";

export interface DesktopHost {
  pickFolder(): Promise<PickFolderResult>;
  revealFile(path: string): Promise<boolean>;
  openExternal(url: string): Promise<boolean>;
  /** A queued render finished. The renderer also gets a `notification` event (web mode shows that). */
  notify(notification: QueuedRenderNotification): void;
}

/** Opens a folder or URL with the system opener; false when opening is turned off. */
export type Opener = (target: string) => Promise<boolean>;

export function systemOpener(env: NodeJS.ProcessEnv = process.env): Opener {
  return async (target) => {
    if (env.SVC_NO_OPEN === "1") return false;
    return startDetached(systemOpenCommand(), [target]);
  };
}

export function createWebHost(options: { folderRoot: () => string; open?: Opener }): DesktopHost {
  const open = options.open ?? systemOpener();
  return {
    pickFolder: async () => ({ kind: "browse", root: options.folderRoot() }),
    revealFile: async (path) => {
      const info = await stat(path).catch(() => undefined);
      if (!info)
        throw appError(
          "file_missing",
          `${path} no longer exists.`,
          "Download it again from the queue.",
        );
      return open(info.isDirectory() ? path : dirname(path));
    },
    openExternal: (url) => open(url),
    notify: () => undefined,
  };
}
