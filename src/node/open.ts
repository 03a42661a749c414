// Handing a URL, file or folder to the desktop around us: the system opener (`open` on macOS,
// `explorer` on Windows, `xdg-open` elsewhere), started detached so it outlives this process.
// Resolves false when nothing could be started (no opener installed), never throws.
import { spawn } from "node:child_process";

export function systemOpenCommand(platform: NodeJS.Platform = process.platform): string {
  if (platform === "darwin") return "open";
  if (platform === "win32") return "explorer";
  return "xdg-open";
}

/** Starts a program that outlives us; false when it cannot be started (not installed). */
export function startDetached(command: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      const child = spawn(command, args, { stdio: "ignore", detached: true });
      child.once("error", () => resolve(false));
      child.once("spawn", () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
