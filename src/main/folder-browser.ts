// Web mode has no native folder dialog, so the main process lists folders for an in-app browser.
// It never shows anything outside its root (the user's home unless the settings name another
// folder): paths are resolved with symlinks and checked, and hidden folders are left out.
import type { Dirent } from "node:fs";
import { readdir, realpath } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import type { FolderListing } from "../shared/ipc";
import { appError } from "./ipc-errors";

/** True when `target` is `root` or below it (both real paths). */
export function isInside(root: string, target: string): boolean {
  return target === root || target.startsWith(root + sep);
}

export interface FolderView {
  path: string;
  parent: string | undefined;
  /** The folder's visible entries (no dot files, nothing `hide` names). */
  entries: Dirent[];
  folders: Array<{ name: string; path: string }>;
}

/**
 * Opens `path` (default: `root`, which must be a real path) for a browser that must not leave
 * `root`: symlinks are followed before the check, and `outside` makes the error for a path that
 * does not resolve inside it.
 */
export async function openFolderInside(
  root: string,
  path: string | undefined,
  outside: () => Error,
  hide: (name: string) => boolean = () => false,
): Promise<FolderView> {
  const target = await realpath(resolve(root, path ?? root)).catch(() => undefined);
  if (!target || !isInside(root, target)) throw outside();
  const all = await readdir(target, { withFileTypes: true }).catch(() => {
    throw appError("folder_unreadable", `Cannot read the folder ${target}.`);
  });
  const entries = all.filter((entry) => !entry.name.startsWith(".") && !hide(entry.name));
  const folders = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => ({ name: entry.name, path: join(target, entry.name) }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return { path: target, parent: target === root ? undefined : dirname(target), entries, folders };
}

export async function listFolders(
  rootDir: string,
  path: string | undefined,
): Promise<FolderListing> {
  const root = await realpath(resolve(rootDir));
  const view = await openFolderInside(root, path, () =>
    appError(
      "folder_outside_root",
      `${path} is not a folder under ${root}.`,
      "Choose a folder inside your home folder, or change the folder browser root in Settings.",
    ),
  );
  return { root, path: view.path, parent: view.parent, folders: view.folders };
}
