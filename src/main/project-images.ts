// Choosing a file for an image variable: only image files inside the project folder, because the
// value is a path the render resolves from the project root (and only the project is uploaded).
// Paths are resolved with symlinks before they are checked, so a link pointing out of the project
// is refused like `../`; the value handed back is project-relative with `/` separators.
import { realpath, stat } from "node:fs/promises";
import { extname, join, relative, resolve, sep } from "node:path";
import type { ImageListing } from "../shared/ipc";
import { isInside, openFolderInside } from "./folder-browser";
import { appError } from "./ipc-errors";

/** File extensions offered for image variables (lower case, without the dot). */
export const IMAGE_EXTENSIONS = ["png", "jpg", "jpeg", "gif", "webp", "avif", "svg"] as const;

export function isImageFile(name: string): boolean {
  return (IMAGE_EXTENSIONS as readonly string[]).includes(extname(name).slice(1).toLowerCase());
}

function outsideError(path: string, root: string) {
  return appError(
    "path_outside_project",
    `${path} is not inside the project folder ${root}.`,
    "Copy the image into the project folder first, then choose it there.",
  );
}

/** The project folder, resolved (symlinks followed). */
export async function projectRoot(dir: string): Promise<string> {
  return realpath(resolve(dir)).catch(() => {
    throw appError("project_not_found", `The project folder ${dir} does not exist.`);
  });
}

/** An image chosen by the user as the variable's value: project-relative, or refused. */
export async function projectImageValue(dir: string, chosen: string): Promise<string> {
  const root = await projectRoot(dir);
  const target = await realpath(resolve(root, chosen)).catch(() => undefined);
  if (!target) throw appError("file_missing", `${chosen} does not exist.`);
  if (!isInside(root, target) || target === root) throw outsideError(chosen, root);
  if (!isImageFile(target) || !(await stat(target)).isFile()) {
    throw appError(
      "not_an_image",
      `${chosen} is not an image file.`,
      `Choose a ${IMAGE_EXTENSIONS.join(", ")} file.`,
    );
  }
  return relative(root, target).split(sep).join("/");
}

/** A folder of the project (default: its root) with its sub-folders and image files. */
export async function listProjectImages(
  dir: string,
  path: string | undefined,
): Promise<ImageListing> {
  const root = await projectRoot(dir);
  const view = await openFolderInside(
    root,
    path,
    () => outsideError(path ?? root, root),
    (name) => name === "node_modules",
  );
  return {
    root,
    path: view.path,
    parent: view.parent,
    folders: view.folders,
    images: view.entries
      .filter((entry) => entry.isFile() && isImageFile(entry.name))
      .map((entry) => ({
        name: entry.name,
        path: relative(root, join(view.path, entry.name)).split(sep).join("/"),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}
