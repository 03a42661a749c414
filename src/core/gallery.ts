// The starter templates (SPEC.md section 10): ready videos in the package's gallery/ folder, each
// an ordinary project plus a card (template.json, src/shared/gallery.ts). Lists them for
// `svc templates list` and the app's "New video", and copies one into a new project folder for
// `svc init --template` and the app. The folder is found next to the package (the same two levels
// up from src/core/ and from the CLI's bundle in out/cli/), so an npm install finds it too.
// A copy is made in a hidden sibling folder and renamed into place: a failed or cancelled copy
// never leaves half a project behind.
import { randomBytes } from "node:crypto";
import { cp, mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseTemplateCard, TEMPLATE_NAME, type StarterTemplate } from "../shared/gallery";
import { ClientError, usageError } from "./errors";

/** The file of a template that describes it; not copied into the creator's project. */
export const TEMPLATE_CARD = "template.json";

/** The gallery/ folder of this installation. */
export function defaultGalleryDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "gallery");
}

export interface GalleryListing {
  templates: (StarterTemplate & { dir: string })[];
  /** Cards that could not be read, each naming its file and what is wrong. */
  errors: string[];
}

/** Every template of the gallery, in the order of their titles. */
export async function listStarterTemplates(
  galleryDir = defaultGalleryDir(),
): Promise<GalleryListing> {
  const entries = await readdir(galleryDir, { withFileTypes: true }).catch(() => []);
  const templates: GalleryListing["templates"] = [];
  const errors: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory() || !TEMPLATE_NAME.test(entry.name)) continue;
    const dir = join(galleryDir, entry.name);
    const text = await readFile(join(dir, TEMPLATE_CARD), "utf8").catch(() => undefined);
    if (text === undefined) continue;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      errors.push(`gallery/${entry.name}/${TEMPLATE_CARD}: ${(error as Error).message}`);
      continue;
    }
    const card = parseTemplateCard(entry.name, json);
    if (card.ok) templates.push({ ...card.template, dir });
    else errors.push(card.error);
  }
  templates.sort((a, b) => a.title.localeCompare(b.title));
  return { templates, errors };
}

/** One template by name; a clear error naming the known ones when there is none. */
export async function findStarterTemplate(
  name: string,
  galleryDir = defaultGalleryDir(),
): Promise<StarterTemplate & { dir: string }> {
  const { templates } = await listStarterTemplates(galleryDir);
  const found = templates.find((template) => template.name === name);
  if (found) return found;
  throw usageError(
    "template_not_found",
    `There is no template named "${name}".`,
    `Templates: ${templates.map((template) => template.name).join(", ")}.`,
    { template: name },
  );
}

/**
 * Copies template `name` into `target`, a folder that does not exist yet or is empty, and answers
 * the folder. Everything but the card is copied.
 */
export async function createFromTemplate(options: {
  name: string;
  target: string;
  galleryDir?: string;
  signal?: AbortSignal;
}): Promise<{ dir: string; template: StarterTemplate }> {
  const template = await findStarterTemplate(options.name, options.galleryDir);
  const target = resolve(options.target);
  const existing = await stat(target).catch(() => undefined);
  if (existing && !existing.isDirectory()) {
    throw usageError(
      "project_exists",
      `${target} is a file, not a folder.`,
      "Choose a new folder name for the project.",
      { dir: target },
    );
  }
  if (existing && (await readdir(target)).length > 0) {
    throw usageError(
      "project_exists",
      `${target} already has files in it.`,
      "Choose a new folder name, or an empty folder, for the project.",
      { dir: target },
    );
  }
  await mkdir(dirname(target), { recursive: true });
  const staging = join(
    dirname(target),
    `.${basename(target)}.${randomBytes(4).toString("hex")}.partial`,
  );
  try {
    await cp(template.dir, staging, {
      recursive: true,
      filter: (source) => resolve(source) !== join(template.dir, TEMPLATE_CARD),
    });
    options.signal?.throwIfAborted();
    if (existing) await rm(target, { recursive: true });
    await rename(staging, target);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    if (options.signal?.aborted) throw error;
    throw new ClientError(
      "project_not_created",
      `Could not make the project in ${target}: ${(error as Error).message}`,
      "Check that the folder can be written to.",
      { params: { dir: target }, cause: error },
    );
  }
  const { dir: _dir, ...card } = template;
  return { dir: target, template: card };
}
