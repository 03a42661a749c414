// The project a render draws from: reading the entry HTML out of an asset's zip, so submit can
// refuse a missing entry file or (with strict variables) values that do not match the declared
// schema before anything is queued, and can pick the aspect ratio the composition is made for.
import {
  detectAspectRatio,
  scanCompositionHtml,
  type CompositionScan,
} from "../../shared/composition-scan";
import type { AspectRatio } from "../../shared/render-options";
import { parseVariablesSchema, type VariableDefinition } from "../../shared/variables";
import type { ServiceContext } from "../context";
import { ApiError } from "../errors";
import { ArchiveError, checkEntryName, readZipEntry } from "./zip-inspect";

const MAX_ENTRY_HTML_BYTES = 10 * 1024 * 1024;

/** Checks a composition path given by a client: relative, inside the project, a file. */
export function checkCompositionPath(composition: string): string {
  try {
    const name = checkEntryName(composition);
    if (name.endsWith("/")) throw new Error("a folder");
    return name.replace(/^\.\//, "");
  } catch {
    throw new ApiError(
      "invalid_parameter",
      `composition "${composition}" must be a relative path inside the project`,
      "composition",
    );
  }
}

export interface CompositionFacts {
  variables: VariableDefinition[];
  /** The composition's own shape, when it is one of the supported ratios. */
  aspectRatio: AspectRatio | undefined;
  /** Seconds, when the root declares data-duration. */
  duration: number | undefined;
}

/** The scan of `composition` inside a stored project zip (svc_project_invalid when unusable). */
export async function scanStoredComposition(
  ctx: ServiceContext,
  storageKey: string,
  composition: string,
): Promise<CompositionScan> {
  const local = await ctx.store.toLocalFile(storageKey);
  let html: Buffer | undefined;
  try {
    html = await readZipEntry(local.path, composition, MAX_ENTRY_HTML_BYTES);
  } catch (error) {
    if (error instanceof ArchiveError)
      throw new ApiError("svc_project_invalid", error.message, "project");
    throw error;
  } finally {
    await local.release();
  }
  if (!html) {
    throw new ApiError(
      "svc_project_invalid",
      `the project has no entry file "${composition}"`,
      "composition",
    );
  }
  const scanned = scanCompositionHtml(html.toString("utf8"));
  if (!scanned.ok)
    throw new ApiError("svc_project_invalid", `${composition}: ${scanned.message}`, "composition");
  return scanned.scan;
}

export async function readComposition(
  ctx: ServiceContext,
  storageKey: string,
  composition: string,
): Promise<CompositionFacts> {
  const scan = await scanStoredComposition(ctx, storageKey, composition);
  return {
    variables: parseVariablesSchema(scan.variablesJson).variables,
    aspectRatio: detectAspectRatio(scan.width, scan.height),
    duration: scan.duration,
  };
}
