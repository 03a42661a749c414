// The compositions this app previews and renders: one folder each under the compositions folder,
// `<name>/index.html` plus whatever it loads. A name from a request is checked against a strict
// pattern before it touches the disk, and every file path is resolved (symlinks too) and must stay
// inside its composition's folder (svc's own root guard: `keepInsideRoot` from svc/node). Schemas
// are read on every request, so an edited composition shows at the next reload without a restart.
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { keepInsideRoot } from "svc/node";
import { parseVariablesSchema, scanCompositionHtml, type VariableDefinition } from "svc/shared";
import { TemplateError } from "./errors";

export const COMPOSITION_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const ENTRY_FILE = "index.html";

export interface Composition {
  name: string;
  /** Real path of the composition's folder. */
  dir: string;
  width: number;
  height: number;
  /** Seconds, when the root declares data-duration. */
  duration: number | undefined;
  fpsHint: number | undefined;
  variables: VariableDefinition[];
  /** Problems in data-composition-variables (the valid entries still work). */
  schemaErrors: string[];
}

export class CompositionLibrary {
  constructor(
    readonly root: string,
    private readonly defaultName: string | undefined,
  ) {}

  /** Names of the folders that hold an index.html, sorted. */
  async list(): Promise<string[]> {
    const entries = await readdir(this.root, { withFileTypes: true }).catch(() => []);
    const names: string[] = [];
    for (const entry of entries) {
      if (!COMPOSITION_NAME.test(entry.name)) continue;
      const index = await stat(join(this.root, entry.name, ENTRY_FILE)).catch(() => undefined);
      if (index?.isFile()) names.push(entry.name);
    }
    return names.sort();
  }

  /** The composition a request without a name gets: DEFAULT_COMPOSITION, else the first one. */
  async defaultComposition(): Promise<string | undefined> {
    return this.defaultName ?? (await this.list())[0];
  }

  /** The composition called `name` (a request's `composition`), scanned. */
  async get(name: string | undefined): Promise<Composition> {
    const wanted = name ?? (await this.defaultComposition());
    if (wanted === undefined) {
      throw new TemplateError(
        "composition_not_found",
        `There are no compositions in ${this.root}: add a folder with an index.html.`,
        { param: "composition" },
      );
    }
    if (!COMPOSITION_NAME.test(wanted)) {
      throw new TemplateError(
        "invalid_composition",
        `"composition" must be the name of a composition folder (letters, digits, "-" and "_"), not ${JSON.stringify(wanted.slice(0, 80))}.`,
        { param: "composition" },
      );
    }
    const dir = await this.folder(wanted);
    const entry = dir ? join(dir, ENTRY_FILE) : undefined;
    const html = entry ? await readFile(entry, "utf8").catch(() => undefined) : undefined;
    if (!dir || html === undefined) {
      const known = await this.list();
      throw new TemplateError(
        "composition_not_found",
        `There is no composition "${wanted}". ${known.length > 0 ? `Use one of: ${known.join(", ")}.` : "There are none yet."}`,
        { param: "composition" },
      );
    }
    const scanned = scanCompositionHtml(html);
    if (!scanned.ok) {
      throw new TemplateError(
        "composition_not_found",
        `The composition "${wanted}" cannot be used: ${scanned.message} ${scanned.hint}`,
        { param: "composition" },
      );
    }
    const schema = parseVariablesSchema(scanned.scan.variablesJson);
    return {
      name: wanted,
      dir,
      width: scanned.scan.width,
      height: scanned.scan.height,
      duration: scanned.scan.duration,
      fpsHint: scanned.scan.fpsHint,
      variables: schema.variables,
      schemaErrors: schema.errors,
    };
  }

  /** The real path of `path` inside the composition `name`, or undefined (missing, outside, hidden). */
  async file(name: string, path: string): Promise<string | undefined> {
    if (!COMPOSITION_NAME.test(name)) return undefined;
    // Dot files and folders (.env, .git) are never served, as svc never uploads them.
    if (path.includes("\0") || path.split(/[\\/]/).some((segment) => segment.startsWith("."))) {
      return undefined;
    }
    const dir = await this.folder(name);
    if (!dir) return undefined;
    const real = await keepInsideRoot(dir, path);
    const info = real ? await stat(real).catch(() => undefined) : undefined;
    return info?.isFile() ? real : undefined;
  }

  private async folder(name: string): Promise<string | undefined> {
    const root = await realpath(this.root).catch(() => undefined);
    const dir = root ? await keepInsideRoot(root, name) : undefined;
    if (!dir || dir === root) return undefined;
    return (await stat(dir).catch(() => undefined))?.isDirectory() ? dir : undefined;
  }
}
