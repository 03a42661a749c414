// Web mode has no native folder dialog, so the main process lists folders for an in-app browser.
// It never shows anything outside its root (the user's home unless the settings name another
// folder): paths are resolved with symlinks and checked, and hidden folders are left out.
import { readdir, realpath } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import type { FolderListing } from "../shared/ipc";
import { appError } from "./ipc-errors";

export async function listFolders(
  rootDir: string,
  path: string | undefined,
): Promise<FolderListing> {
  const root = await realpath(resolve(rootDir));
  const target = await realpath(resolve(root, path ?? root)).catch(() => undefined);
  if (!target || (target !== root && !target.startsWith(root + sep))) {
    throw appError(
      "folder_outside_root",
      `${path} is not a folder under ${root}.`,
      "Choose a folder inside your home folder, or change the folder browser root in Settings.",
    );
  }
  const entries = await readdir(target, { withFileTypes: true }).catch(() => {
    throw appError("folder_unreadable", `Cannot read the folder ${target}.`);
  });
  const folders = entries
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .map((entry) => ({ name: entry.name, path: join(target, entry.name) }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return { root, path: target, parent: target === root ? undefined : dirname(target), folders };
}
