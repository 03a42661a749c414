// Reads a local project before anything is zipped or uploaded: the entry file, its aspect ratio
// (from data-width/data-height, 16:9, 9:16 or 1:1 within +-0.05), duration and variables schema.
// Uses the same scanner as the engine and the service, so all three agree on the answer.
import { readFile, stat } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import {
  detectAspectRatio,
  scanCompositionHtml,
  type ProjectScan,
} from "../shared/composition-scan";
import type { AspectRatio } from "../shared/render-options";
import { parseVariablesSchema } from "../shared/variables";
import { ClientError, usageError } from "./errors";

/** Normalises a composition path to forward slashes inside the project, or refuses it. */
export function normaliseCompositionPath(composition: string): string {
  const cleaned = composition.replace(/\\/g, "/").replace(/^\.\//, "");
  if (
    cleaned === "" ||
    isAbsolute(composition) ||
    cleaned.startsWith("/") ||
    cleaned.split("/").includes("..")
  ) {
    throw usageError(
      "composition_outside_project",
      `The composition must be a path inside the project, not "${composition}".`,
      "Give it relative to the project folder, e.g. scenes/intro.html.",
      { composition },
    );
  }
  return cleaned;
}

export async function scanProject(
  dir: string,
  options: { composition?: string; aspectRatio?: AspectRatio } = {},
): Promise<ProjectScan> {
  const root = resolve(dir);
  const info = await stat(root).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw usageError(
      "project_not_found",
      `${dir} is not a folder.`,
      "Give the project folder that holds index.html.",
    );
  }
  const composition = normaliseCompositionPath(options.composition ?? "index.html");
  const entry = resolve(root, composition);
  const inside = relative(root, entry);
  if (inside.startsWith("..") || isAbsolute(inside) || inside.split(sep).includes("..")) {
    throw usageError(
      "composition_outside_project",
      `The composition ${composition} is outside the project folder.`,
      "Give it relative to the project folder, e.g. scenes/intro.html.",
      { composition },
    );
  }
  let html: string;
  try {
    html = await readFile(entry, "utf8");
  } catch {
    throw new ClientError(
      "composition_not_found",
      `No entry file ${composition} in ${root}.`,
      "Create index.html in the project folder, or name another entry file.",
      { params: { composition } },
    );
  }
  const scanned = scanCompositionHtml(html);
  if (!scanned.ok)
    throw new ClientError(
      "composition_invalid",
      `${composition}: ${scanned.message}`,
      scanned.hint,
    );
  const { width, height } = scanned.scan;
  const detected = detectAspectRatio(width, height);
  if (options.aspectRatio && detected && options.aspectRatio !== detected) {
    throw usageError(
      "aspect_mismatch",
      `The aspect ratio ${options.aspectRatio} conflicts with the composition, which is ${width}x${height} (${detected}).`,
      `Let the aspect ratio be detected, or change data-width/data-height in ${composition}.`,
      { requested: options.aspectRatio, detected },
    );
  }
  if (options.aspectRatio && !detected) {
    throw usageError(
      "aspect_mismatch",
      `The aspect ratio ${options.aspectRatio} conflicts with the composition, which is ${width}x${height}.`,
      `Change data-width/data-height in ${composition} to a 16:9, 9:16 or 1:1 size.`,
    );
  }
  if (!detected) {
    throw new ClientError(
      "aspect_unsupported",
      `${composition} is ${width}x${height}, which is not 16:9, 9:16 or 1:1.`,
      'Use a supported size, e.g. data-width="1920" data-height="1080".',
    );
  }
  const schema = parseVariablesSchema(scanned.scan.variablesJson);
  return {
    root,
    composition,
    width,
    height,
    aspectRatio: detected,
    duration: scanned.scan.duration,
    variables: schema.variables,
    schemaErrors: schema.errors,
  };
}
