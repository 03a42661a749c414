// Web mode has no native folder dialog, so the main process lists folders for an in-app browser.
// Web mode serves the app to a browser tab, so the browser shows only "places" the user owns: the
// home folder and the mounted volumes (USB drives, other disks) owned by this user, or the one
// folder the settings name instead; never other users' files or the system's. Paths are resolved
// with symlinks and checked, and hidden folders are left out. A listing marks the sub-folders that
// hold a composition (an HTML file at their top) and lists the shown folder's own HTML files.
import type { Dirent } from "node:fs";
import { readdir, realpath, stat } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import type { FolderPlace, ProjectFolderListing } from "../shared/ipc";
import { appError } from "./ipc-errors";

/** Where mounted volumes appear (Linux desktops, macOS); only those the user owns are offered. */
const VOLUME_PARENTS = (user: string) => [
  `/media/${user}`,
  `/run/media/${user}`,
  "/media",
  "/mnt",
  "/Volumes",
];

/** A sub-folder this many entries deep into a listing is not opened to look for compositions. */
const PROJECT_MARK_LIMIT = 300;

export const FOLDER_LIMIT_REASON =
  "The folder browser shows only your home folder and the drives you own, so that other people's files and the system's stay out of view of this browser tab.";

const isHtml = (name: string) => /\.html?$/i.test(name);

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

/**
 * The places the browser may show: the configured folder alone, or the home folder and the
 * mounted volumes owned by this user (`uid`, default the process's).
 */
export async function folderPlaces(
  home: string,
  configured: string | undefined,
  options: { uid?: number; user?: string; volumeParents?: string[] } = {},
): Promise<FolderPlace[]> {
  if (configured) {
    const path = await realpath(resolve(configured)).catch(() => {
      throw appError(
        "folder_outside_root",
        `The folder ${configured} named in Settings does not exist.`,
        "Fix or clear “Only show folders under” in Settings.",
      );
    });
    return [{ name: basename(path) || path, path }];
  }
  const places: FolderPlace[] = [{ name: "Home", path: await realpath(resolve(home)) }];
  const uid = options.uid ?? process.getuid?.();
  const parents = options.volumeParents ?? VOLUME_PARENTS(options.user ?? basename(home));
  for (const parent of parents) {
    const entries = await readdir(parent, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.name.startsWith(".") || !entry.isDirectory()) continue;
      const path = await realpath(join(parent, entry.name)).catch(() => undefined);
      if (!path || places.some((place) => isInside(place.path, path))) continue;
      const info = await stat(path).catch(() => undefined);
      if (info && (uid === undefined || info.uid === uid)) places.push({ name: entry.name, path });
    }
  }
  return places;
}

/** True when the folder has an HTML file at its top (a composition the app can open). */
async function holdsComposition(path: string): Promise<boolean> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  return entries.some((entry) => entry.isFile() && isHtml(entry.name));
}

/**
 * One folder inside the places (default: the first place, home), or with `places` the list of
 * places itself (what "Up one folder" leads to from the top of a place).
 */
export async function listProjectFolders(
  places: FolderPlace[],
  input: { path?: string | undefined; places?: boolean | undefined },
): Promise<ProjectFolderListing> {
  const base = { places, limit: FOLDER_LIMIT_REASON };
  if (input.places) {
    const folders = await Promise.all(
      places.map(async (place) => ({ ...place, project: await holdsComposition(place.path) })),
    );
    return { ...base, path: undefined, parent: undefined, folders, htmlFiles: [] };
  }
  const wanted = input.path ?? places[0]!.path;
  const target = await realpath(resolve(wanted)).catch(() => undefined);
  const place = target && places.find((candidate) => isInside(candidate.path, target));
  if (!target || !place) {
    throw appError(
      "folder_outside_root",
      `${wanted} is not in a folder this browser shows.`,
      "Choose a folder inside your home folder or on one of your drives (Choose folder…).",
    );
  }
  const view = await openFolderInside(place.path, target, () =>
    appError("folder_outside_root", `${wanted} is not in a folder this browser shows.`),
  );
  const folders = await Promise.all(
    view.folders.map(async (folder, index) => ({
      ...folder,
      project: index < PROJECT_MARK_LIMIT && (await holdsComposition(folder.path)),
    })),
  );
  return {
    ...base,
    path: view.path,
    // From the top of a place, up leads to the list of places ("").
    parent: view.parent ?? "",
    folders,
    htmlFiles: view.entries
      .filter((entry) => entry.isFile() && isHtml(entry.name))
      .map((entry) => entry.name)
      .sort((a, b) => a.localeCompare(b)),
  };
}
