// Files the app hands to the desktop around it: opening a finished video with the system's
// default app, and choosing an image for an image variable. Electron does both with its own APIs
// (electron-host.ts); this is the plain-Node version web mode uses, where the host is the same
// computer as the browser: the system opener (`open`, `explorer`, `xdg-open`, or the program
// named by SVC_FILE_OPENER) is started detached, and images are chosen in the in-app browser.
import type { PickImageResult } from "../shared/ipc";
import { startDetached, systemOpenCommand } from "../node/index";
import { appError } from "./ipc-errors";

export interface FileHost {
  /** Opens `path` with the default app; throws `no_opener` when there is nothing to open it with. */
  openFile(path: string): Promise<void>;
  /** Lets the user choose an image inside `root` (an absolute path), or answers "browse". */
  pickImage(root: string): Promise<PickImageResult>;
}

/** The command that opens a file on this platform, unless SVC_FILE_OPENER names another. */
export function fileOpenerCommand(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): { command: string; args: string[] } {
  const configured = env.SVC_FILE_OPENER?.trim();
  if (configured) return { command: configured, args: [] };
  // Explorer opens a file with its default app on Windows (no cmd.exe quoting rules in the way).
  return { command: systemOpenCommand(platform), args: [] };
}

export function createSystemFileHost(env: NodeJS.ProcessEnv = process.env): FileHost {
  return {
    openFile: async (path) => {
      const { command, args } = fileOpenerCommand(env);
      if (await startDetached(command, [...args, path])) return;
      throw appError(
        "no_opener",
        `No program to open files with was found on this computer (${command}).`,
        env.SVC_FILE_OPENER?.trim()
          ? "SVC_FILE_OPENER names a program that cannot be started: correct it or unset it; “Show in folder” works meanwhile."
          : process.platform === "linux"
            ? "Install xdg-utils (xdg-open) or set SVC_FILE_OPENER to a program that opens files; “Show in folder” works meanwhile."
            : "Set SVC_FILE_OPENER to a program that opens files; “Show in folder” works meanwhile.",
      );
    },
    pickImage: async (root) => ({ kind: "browse", root }),
  };
}
