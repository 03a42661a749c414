// What the engine found about a render's page (its warnings, the CDN libraries it used), merged
// into the JSON the renders row stores; a render's chunks and outputs load the same page, so an
// entry already stored is kept once.
import type { RenderLibrary, RenderWarning } from "../../shared/api";
import type { ResolvedLibrary } from "../../node/index";

/**
 * The columns of a render's row that change when a part of it (the whole render, a chunk, an
 * output) finished with these findings: none when it found nothing new to say.
 */
export function findingsUpdate(
  render: { warnings_json: string; libraries_json?: string | null },
  found: { warnings?: string[]; libraries?: ResolvedLibrary[] },
): { warnings_json?: string; libraries_json?: string } {
  return {
    ...(found.warnings?.length
      ? { warnings_json: withCompositionWarnings(render.warnings_json, found.warnings) }
      : {}),
    ...(found.libraries?.length
      ? { libraries_json: withLibraries(render.libraries_json, found.libraries) }
      : {}),
  };
}

/**
 * A render's stored warnings with the engine's warnings about the page added (code
 * `composition`, `param: "project"`), each once.
 */
export function withCompositionWarnings(warningsJson: string, messages: string[]): string {
  const warnings = JSON.parse(warningsJson) as RenderWarning[];
  for (const message of messages) {
    if (warnings.some((warning) => warning.message === message)) continue;
    warnings.push({ code: "composition", message, param: "project" });
  }
  return JSON.stringify(warnings);
}

/**
 * A render's stored libraries with the engine's (a render's page loads the same libraries in every
 * output and chunk; an entry already there is kept once), as the JSON of libraries_json.
 */
export function withLibraries(
  librariesJson: string | null | undefined,
  libraries: ResolvedLibrary[],
): string {
  const stored = parseLibraries(librariesJson);
  for (const library of libraries) {
    const entry: RenderLibrary = {
      package: library.packageName,
      requested: library.requested,
      version: library.version,
      integrity: library.integrity,
      path: library.path,
    };
    const same = (other: RenderLibrary) =>
      other.package === entry.package &&
      other.requested === entry.requested &&
      other.path === entry.path;
    if (!stored.some(same)) stored.push(entry);
  }
  return JSON.stringify(stored);
}

export function parseLibraries(json: string | null | undefined): RenderLibrary[] {
  return json ? (JSON.parse(json) as RenderLibrary[]) : [];
}
