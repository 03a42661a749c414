// The body of POST /api/render, checked with svc's shared schemas (the same fields, defaults and
// "4k is mp4 only" rule as the CLI, the desktop app and the render service), then the variables
// against the composition's own declaration. Strict: a key the composition does not declare is
// refused like a wrong type, because on a public endpoint a typo should fail, not render the
// default silently. The aspect ratio comes from the composition (data-width/data-height).
// Image variables are URLs the render's browser will load, so they must name a file of the
// composition or a URL on an allowed origin (ALLOWED_ORIGINS): anything else would let a caller
// make the server fetch internal addresses (cloud metadata, admin ports).
import {
  blockingIssues,
  formatVariableIssue,
  renderOptionsShape,
  renderSettingsRule,
  validateVariables,
  z,
  type OutputFormat,
  type Quality,
  type Resolution,
  type VariableValues,
} from "svc/shared";
import type { Composition, CompositionLibrary } from "./compositions";
import { TemplateError } from "./errors";

const BODY_FIELDS = ["composition", "variables", "format", "fps", "quality", "resolution"];

export const renderBodySchema = z
  .strictObject({
    composition: z.string({ error: "composition must be a string" }).optional(),
    variables: z
      .record(z.string(), z.unknown(), { error: "variables must be a JSON object" })
      .optional(),
    fps: renderOptionsShape.fps,
    quality: renderOptionsShape.quality,
    format: renderOptionsShape.format,
    resolution: renderOptionsShape.resolution,
  })
  .superRefine(renderSettingsRule);

export interface RenderSpec {
  composition: Composition;
  variables: VariableValues;
  /** The output settings, as the engine and the service client both take them. */
  settings: { fps: number; quality: Quality; format: OutputFormat; resolution: Resolution };
}

export async function parseRenderRequest(
  body: unknown,
  compositions: CompositionLibrary,
  allowedOrigins: readonly string[] | "*",
): Promise<RenderSpec> {
  const parsed = renderBodySchema.safeParse(body ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    if (issue.code === "unrecognized_keys") {
      throw new TemplateError(
        "invalid_parameter",
        `Unknown field ${issue.keys.map((key) => `"${key}"`).join(", ")}: the body takes ${BODY_FIELDS.join(", ")}.`,
        { param: issue.keys[0]! },
      );
    }
    const param = issue.path.map(String).join(".");
    if (!param) {
      throw new TemplateError(
        "invalid_parameter",
        `The body must be a JSON object with any of ${BODY_FIELDS.join(", ")}.`,
        { param: "body" },
      );
    }
    throw new TemplateError("invalid_parameter", `Invalid ${param}: ${sentence(issue.message)}`, {
      param: param.split(".")[0]!,
    });
  }
  const { composition: name, variables = {}, ...settings } = parsed.data;
  const composition = await compositions.get(name);
  const issues = blockingIssues(validateVariables(composition.variables, variables), true);
  if (issues.length > 0) {
    throw new TemplateError(
      "invalid_variables",
      `The variables do not match the composition "${composition.name}": ${issues.map(formatVariableIssue).join("; ")}. Send only the variables it declares, with values of their types.`,
      { param: "variables", issues },
    );
  }
  const refused = await refusedImages(composition, variables, compositions, allowedOrigins);
  if (refused.length > 0) {
    throw new TemplateError(
      "image_not_allowed",
      `${refused.map((issue) => `${issue.id}: ${issue.message}`).join("; ")}. An image variable must be a file of the composition (a path like images/logo.png) or a URL on an origin in ALLOWED_ORIGINS.`,
      { param: "variables", issues: refused },
    );
  }
  return { composition, variables, settings };
}

interface RefusedImage {
  id: string;
  code: "not-allowed";
  message: string;
}

/** Image variables whose value is neither a file of the composition nor on an allowed origin. */
async function refusedImages(
  composition: Composition,
  variables: VariableValues,
  compositions: CompositionLibrary,
  allowedOrigins: readonly string[] | "*",
): Promise<RefusedImage[]> {
  const refused: RefusedImage[] = [];
  for (const definition of composition.variables) {
    const value = variables[definition.id];
    if (definition.type !== "image" || typeof value !== "string" || value === "") continue;
    const shown = JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
    if (/^[a-z][a-z\d+.-]*:/i.test(value) || value.startsWith("//")) {
      let url: URL | undefined;
      try {
        url = new URL(value);
      } catch {
        url = undefined;
      }
      const allowed =
        url !== undefined &&
        /^https?:$/.test(url.protocol) &&
        (allowedOrigins === "*" || allowedOrigins.includes(url.origin));
      if (!allowed) {
        refused.push({
          id: definition.id,
          code: "not-allowed",
          message: `${shown} is not on an allowed origin`,
        });
      }
      continue;
    }
    // A path: the browser resolves it against index.html and the server decodes it, so check
    // the decoded path without its query or fragment.
    let path: string | undefined;
    try {
      path = decodeURIComponent(value.replace(/[?#].*$/s, ""));
    } catch {
      path = undefined;
    }
    if (!path || !(await compositions.file(composition.name, path))) {
      refused.push({
        id: definition.id,
        code: "not-allowed",
        message: `${shown} is not a file of the composition "${composition.name}"`,
      });
    }
  }
  return refused;
}

/** A message ending in exactly one full stop. */
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
