// The body of POST /api/render, checked with svc's shared schemas (the same fields, defaults and
// "4k is mp4 only" rule as the CLI, the desktop app and the render service), then the variables
// against the composition's own declaration. Strict: a key the composition does not declare is
// refused like a wrong type, because on a public endpoint a typo should fail, not render the
// default silently. The aspect ratio comes from the composition (data-width/data-height).
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
  return { composition, variables, settings };
}

/** A message ending in exactly one full stop. */
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}
