// Names creators see for the things the app works on, instead of their paths (SPEC.md: no path,
// flag or code word outside "For developers"): a project folder by its own name, a composition
// by a title made from its file name (the folder's index.html is its "Main video"), a picture by
// its file name. Works on both / and \ separated paths (the renderer has no node:path).

function lastPart(path: string): string {
  const parts = path.split(/[\\/]+/).filter(Boolean);
  return parts[parts.length - 1] ?? path;
}

/** A folder's own name: "/home/ana/Videos/Spring sale" -> "Spring sale". */
export function folderName(path: string): string {
  return lastPart(path);
}

/**
 * Folder names for a list of folders, each with the name of the folder it is in when two would
 * read the same ("promo (in Clients)", "promo (in Videos)").
 */
export function folderNames(paths: readonly string[]): Map<string, string> {
  const count = new Map<string, number>();
  for (const path of paths) count.set(folderName(path), (count.get(folderName(path)) ?? 0) + 1);
  const names = new Map<string, string>();
  for (const path of paths) {
    const name = folderName(path);
    const parent = lastPart(path.replace(/[\\/]+[^\\/]*[\\/]*$/, ""));
    names.set(path, (count.get(name) ?? 0) > 1 && parent ? `${name} (in ${parent})` : name);
  }
  return names;
}

/** A composition's title: index.html -> "Main video", scenes/intro-card.html -> "Intro card". */
export function compositionTitle(file: string): string {
  const base = lastPart(file).replace(/\.html?$/i, "");
  if (base.toLowerCase() === "index" && !/[\\/]/.test(file)) return "Main video";
  const words = base.replace(/[-_.]+/g, " ").trim();
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : file;
}

/** A file's name: "assets/photo-1.svg" -> "photo-1.svg" (a picture, a rendered video). */
export function fileName(path: string): string {
  return lastPart(path);
}
