// The desktop host with Electron's own APIs: the native folder dialog, "show in folder", the
// system browser for links, and desktop notifications.
import { stat } from "node:fs/promises";
import { dialog, Notification, shell, type BrowserWindow } from "electron";
import type { FileHost } from "./file-host";
import type { DesktopHost } from "./host";
import { appError } from "./ipc-errors";
import { IMAGE_EXTENSIONS } from "./project-images";

/**
 * The system browser, for web pages only: `shell.openExternal` also opens file:, smb: and custom
 * schemes, which can run or mount anything (Electron security checklist, item 15). Every caller
 * (IPC, sign-in, links from the window) comes through here.
 */
export async function openInBrowser(url: string): Promise<boolean> {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) return false;
  await shell.openExternal(url);
  return true;
}

export function createElectronHost(window: () => BrowserWindow | undefined): DesktopHost {
  return {
    pickFolder: async () => {
      const owner = window();
      const options = { properties: ["openDirectory" as const], title: "Choose a project folder" };
      const result = owner
        ? await dialog.showOpenDialog(owner, options)
        : await dialog.showOpenDialog(options);
      const path = result.filePaths[0];
      return result.canceled || !path ? { kind: "cancelled" } : { kind: "picked", path };
    },
    revealFile: async (path) => {
      if (!(await stat(path).catch(() => undefined))) {
        throw appError(
          "file_missing",
          `${path} no longer exists.`,
          "Download it again from the queue.",
        );
      }
      shell.showItemInFolder(path);
      return true;
    },
    openExternal: openInBrowser,
    notify: (notification) => {
      if (Notification.isSupported()) {
        new Notification({ title: notification.title, body: notification.body }).show();
      }
    },
  };
}

/** Opening a video with its default app, and the native dialog for an image variable's file. */
export function createElectronFileHost(window: () => BrowserWindow | undefined): FileHost {
  return {
    openFile: async (path) => {
      const problem = await shell.openPath(path);
      if (problem) {
        throw appError(
          "no_opener",
          `The video could not be opened: ${problem}`,
          "Install an app that plays videos, or use “Show in folder”.",
        );
      }
    },
    pickImage: async (root) => {
      const owner = window();
      const options = {
        title: "Choose an image",
        defaultPath: root,
        properties: ["openFile" as const],
        filters: [{ name: "Images", extensions: [...IMAGE_EXTENSIONS] }],
      };
      const result = owner
        ? await dialog.showOpenDialog(owner, options)
        : await dialog.showOpenDialog(options);
      const path = result.filePaths[0];
      return result.canceled || !path ? { kind: "cancelled" } : { kind: "picked", path };
    },
  };
}
