// The "New video" gallery's main-process side: the starter templates (src/core/gallery.ts), their
// tiles and new projects made from them. A tile is a frame of the template itself at its poster
// time, rendered by `svc still` as a child process (src/main may not import the engine; a stuck
// browser must not take the window down), one at a time, and kept in the app's data folder under a
// hash of the template's files: after the first opening every tile is a file read, and a changed
// template gets a new picture by itself. New projects go in the creator's Videos folder.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { createFromTemplate, listStarterTemplates } from "../core/index";
import type { StarterTemplate } from "../shared/gallery";
import { appError } from "./ipc-errors";

/** A still takes seconds; much longer means its browser is stuck. */
const POSTER_TIMEOUT_MS = 120_000;

export class Gallery {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly posters = new Map<string, Promise<string>>();

  constructor(
    private readonly options: {
      galleryDir: string;
      /** Where tiles are kept. */
      cacheDir: string;
      /** bin/svc.js */
      svcBin: string;
      /** The folder new videos are made in (the Videos folder). */
      projectsDir: string;
    },
  ) {}

  async list(): Promise<StarterTemplate[]> {
    const { templates } = await listStarterTemplates(this.options.galleryDir);
    return templates.map(({ dir: _dir, ...card }) => card);
  }

  /** The tile of template `name` as a data: URL (JPEG). */
  async poster(name: string): Promise<{ url: string }> {
    const template = (await listStarterTemplates(this.options.galleryDir)).templates.find(
      (entry) => entry.name === name,
    );
    if (!template) throw appError("template_not_found", "This template is no longer there.");
    const file = join(this.options.cacheDir, `${name}-${await folderHash(template.dir)}.jpg`);
    let made = this.posters.get(file);
    if (!made) {
      made = this.makePoster(template.dir, template.posterTime, file);
      this.posters.set(file, made);
      made.catch(() => this.posters.delete(file));
    }
    const bytes = await readFile(await made);
    return { url: `data:image/jpeg;base64,${bytes.toString("base64")}` };
  }

  /** Copies template `name` into a new folder `folderName` of the Videos folder. */
  async create(name: string, folderName: string): Promise<{ dir: string }> {
    const target = join(this.options.projectsDir, folderName);
    const existing = await stat(target).catch(() => undefined);
    if (existing && (!existing.isDirectory() || (await readdir(target)).length > 0)) {
      throw appError(
        "project_exists",
        `There is already a folder named "${folderName}" in your Videos folder.`,
        "Choose another name for the new video.",
      );
    }
    try {
      const { dir } = await createFromTemplate({
        name,
        target,
        galleryDir: this.options.galleryDir,
      });
      return { dir };
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "template_not_found") {
        throw appError("template_not_found", "This template is no longer there.");
      }
      throw appError(
        "project_not_created",
        "The new video's folder could not be made in your Videos folder.",
        "Check that the Videos folder exists and can be written to.",
      );
    }
  }

  private async makePoster(dir: string, time: number, file: string): Promise<string> {
    if (await stat(file).catch(() => undefined)) return file;
    // One still at a time: twelve browsers at once would stall a small machine.
    const turn = this.queue.then(() => this.renderStill(dir, time, file));
    this.queue = turn.catch(() => undefined);
    await turn;
    return file;
  }

  private async renderStill(dir: string, time: number, file: string): Promise<void> {
    await mkdir(this.options.cacheDir, { recursive: true });
    const partial = `${file}.partial.jpg`;
    const args = [this.options.svcBin, "still", dir, "--time", String(time), "-o", partial];
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [...args, "--format", "jpeg", "--json"], {
        // Inside Electron, process.execPath is the Electron binary: make it behave as Node.
        env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" },
        stdio: ["ignore", "ignore", "pipe"],
        timeout: POSTER_TIMEOUT_MS,
        killSignal: "SIGINT",
      });
      let stderr = "";
      child.stderr
        .setEncoding("utf8")
        .on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-1000)));
      child.once("error", (error) => reject(error));
      child.once("close", (code) =>
        code === 0
          ? resolve()
          : reject(
              appError(
                "poster_failed",
                "This template's picture could not be made.",
                stderr.trim().split("\n").pop(),
              ),
            ),
      );
    }).catch(async (error: unknown) => {
      await rm(partial, { force: true });
      throw error;
    });
    await rename(partial, file);
  }
}

/** A short hash of every file of a template folder (names and bytes). */
async function folderHash(dir: string): Promise<string> {
  const hash = createHash("sha256");
  const walk = async (folder: string): Promise<void> => {
    const entries = (await readdir(folder, { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) hash.update(relative(dir, path)).update(await readFile(path));
    }
  };
  await walk(dir);
  return hash.digest("hex").slice(0, 16);
}
