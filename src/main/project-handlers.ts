// The `project.*` and `variables.validate` IPC methods, and the project rule they share: which
// folder is a project and which composition it opens with (`scanProjectFolder`). The queue's
// handlers use the same rule before queueing (queue-handlers.ts).
import { readdir, stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import type { ProjectScanView } from "../shared/ipc";
import { resolveVariables, validateVariables } from "../shared/variables";
import { dryRunProject, scanProject } from "../core/index";
import type { FileHost } from "./file-host";
import { appError } from "./ipc-errors";
import type { IpcHandlers } from "./ipc-router";
import type { LocalQuotes } from "./local-quote";
import type { PreviewServers } from "./preview-server";
import type { ProjectChecks } from "./project-check";
import { listProjectImages, projectImageValue, projectRoot } from "./project-images";

type ProjectHandlers = Pick<
  IpcHandlers,
  | "project.scan"
  | "project.dryRun"
  | "project.previewUrl"
  | "project.check"
  | "project.quote"
  | "project.pickImage"
  | "project.listImages"
  | "variables.validate"
>;

/**
 * A folder without index.html opens with its first other HTML file (the picker offers the
 * rest); one with no HTML file at all is refused in the Project screen's words.
 */
export async function scanProjectFolder(
  dir: string,
  composition: string | undefined,
): Promise<ProjectScanView> {
  const compositions = await htmlFiles(resolve(dir));
  let chosen = composition;
  if (!chosen && !compositions.includes("index.html")) {
    chosen = compositions.find((file) => !file.includes("/")) ?? compositions[0];
    const info = await stat(resolve(dir)).catch(() => undefined);
    if (!chosen && info?.isDirectory())
      throw appError(
        "no_composition",
        `${basename(resolve(dir))} holds no composition: there is no HTML file in ${resolve(dir)}.`,
        "Choose another folder with Choose folder… (folders that hold one are marked Project), or try an example.",
      );
  }
  const result = await scanProject(dir, chosen ? { composition: chosen } : {});
  return { ...result, compositions };
}

export function projectHandlers(options: {
  preview: PreviewServers;
  checks: ProjectChecks;
  quotes: LocalQuotes;
  files: FileHost;
}): ProjectHandlers {
  const { preview, checks, quotes, files } = options;
  const scan = scanProjectFolder;
  return {
    "project.scan": ({ dir, composition }) => scan(dir, composition),
    "project.dryRun": ({ dir, composition, variables }) =>
      dryRunProject({ dir, composition, variables }),
    "project.previewUrl": async ({ dir, composition }) => {
      const project = await scan(dir, composition);
      return { url: await preview.urlFor(project.root, project.composition) };
    },
    "project.check": async ({ dir, composition, variables }) => {
      const project = await scan(dir, composition);
      const findings = await checks.check({
        root: project.root,
        composition: project.composition,
        ...(variables ? { variables } : {}),
      });
      return { findings };
    },
    "project.quote": async ({ dir, composition, settings }) => {
      const project = await scan(dir, composition);
      return quotes.quote(project.root, project.composition, settings);
    },
    "variables.validate": async ({ dir, composition, values }) => {
      const project = await scan(dir, composition);
      return {
        issues: validateVariables(project.variables, values),
        resolved: resolveVariables(project.variables, values),
      };
    },
    "project.pickImage": async ({ dir }) => {
      const root = await projectRoot(dir);
      const picked = await files.pickImage(root);
      return picked.kind === "picked"
        ? { kind: "picked", path: await projectImageValue(root, picked.path) }
        : picked;
    },
    "project.listImages": ({ dir, path }) => listProjectImages(dir, path),
  };
}

/** HTML files at the top of the project and one folder down (compositions/*.html), sorted. */
async function htmlFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    if (entry.isFile() && /\.html?$/i.test(entry.name)) found.push(entry.name);
    if (entry.isDirectory()) {
      const inner = await readdir(join(root, entry.name), { withFileTypes: true }).catch(() => []);
      for (const file of inner) {
        if (file.isFile() && /\.html?$/i.test(file.name)) found.push(`${entry.name}/${file.name}`);
      }
    }
  }
  return found.sort();
}
