import { mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { folderPlaces, listProjectFolders } from "./folder-browser";
import { tempDir } from "./testing/support";

let base: string;
let home: string;
let media: string;

beforeAll(async () => {
  base = await realpath(await tempDir("svc-folders-"));
  home = join(base, "home");
  media = join(base, "media");
  await mkdir(join(home, "films", "badge-only"), { recursive: true });
  await writeFile(join(home, "films", "badge-only", "badge.html"), "<html></html>");
  await mkdir(join(home, "films", "empty"), { recursive: true });
  await mkdir(join(home, "films", ".hidden"), { recursive: true });
  await mkdir(join(media, "USB-STICK"), { recursive: true });
  await symlink(base, join(home, "films", "escape"));
});

describe("the web-mode folder browser", () => {
  it("offers home and the drives this user owns, not other users' drives", async () => {
    const uid = process.getuid!();
    expect(await folderPlaces(home, undefined, { uid, volumeParents: [media] })).toEqual([
      { name: "Home", path: home },
      { name: "USB-STICK", path: join(media, "USB-STICK") },
    ]);
    expect(await folderPlaces(home, undefined, { uid: uid + 1, volumeParents: [media] })).toEqual([
      { name: "Home", path: home },
    ]);
    expect(await folderPlaces(home, join(home, "films"), {})).toEqual([
      { name: "films", path: join(home, "films") },
    ]);
  });

  it("marks folders holding a composition, lists HTML files, and goes up to the places", async () => {
    const places = [{ name: "Home", path: home }];
    const films = await listProjectFolders(places, { path: join(home, "films") });
    expect(films.folders.map((f) => [f.name, f.project])).toEqual([
      ["badge-only", true],
      ["empty", false],
    ]);
    expect(films.parent).toBe(home);
    expect((await listProjectFolders(places, {})).parent).toBe("");
    const badge = await listProjectFolders(places, { path: join(home, "films", "badge-only") });
    expect(badge.htmlFiles).toEqual(["badge.html"]);
    // A link out of the places is refused like the path it points to.
    await expect(
      listProjectFolders(places, { path: join(home, "films", "escape") }),
    ).rejects.toMatchObject({ code: "folder_outside_root" });
    await expect(listProjectFolders(places, { path: "/etc" })).rejects.toMatchObject({
      code: "folder_outside_root",
    });
  });
});
