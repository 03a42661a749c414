// Composition variables (SPEC.md section 2): the schema a composition declares in
// `data-composition-variables`, and the check of a set of values against it. One implementation
// shared by the engine (page runtime and render), the CLI, the service and the desktop form.
// Parsing never throws: a composition with one bad entry still renders with the others, and the
// caller decides whether the collected errors are fatal.
import { z } from "zod";

export type VariableType = "string" | "number" | "color" | "boolean" | "enum" | "font" | "image";

export const VARIABLE_TYPES: readonly VariableType[] = [
  "string",
  "number",
  "color",
  "boolean",
  "enum",
  "font",
  "image",
];

export interface VariableOption {
  value: string;
  label: string;
}

export interface VariableDefinition {
  id: string;
  type: VariableType;
  label: string;
  default: unknown;
  description?: string;
  maxLength?: number;
  min?: number;
  max?: number;
  step?: number;
  options?: VariableOption[];
}

export type VariableValues = Record<string, unknown>;

export type VariableIssueCode =
  "undeclared" | "type-mismatch" | "enum-out-of-range" | "out-of-range";

export interface VariableIssue {
  id: string;
  code: VariableIssueCode;
  message: string;
}

const finiteNumber = z.number().refine(Number.isFinite, { error: "must be a finite number" });

const optionSchema = z.union([
  z.object({ value: z.string(), label: z.string().optional() }),
  // Hand-written schemas often list options as plain strings; accept them as value = label.
  z.string(),
]);

const definitionSchema = z.object({
  id: z.string().min(1, { error: "id must be a non-empty string" }),
  type: z.enum(VARIABLE_TYPES as [VariableType, ...VariableType[]], {
    error: `type must be one of ${VARIABLE_TYPES.join(", ")}`,
  }),
  label: z.string().optional(),
  default: z.unknown().optional(),
  description: z.string().optional(),
  maxLength: z.number().int().nonnegative().optional(),
  min: finiteNumber.optional(),
  max: finiteNumber.optional(),
  step: finiteNumber.optional(),
  options: z.array(optionSchema).optional(),
});

/** Parse the JSON of data-composition-variables. Never throws; bad entries become errors (strings that name the entry and what is wrong). */
export function parseVariablesSchema(json: string | null | undefined): {
  variables: VariableDefinition[];
  errors: string[];
} {
  const variables: VariableDefinition[] = [];
  const errors: string[] = [];
  if (json === null || json === undefined || json.trim() === "") return { variables, errors };
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error) {
    errors.push(`data-composition-variables is not valid JSON: ${(error as Error).message}`);
    return { variables, errors };
  }
  if (!Array.isArray(raw)) {
    errors.push(`data-composition-variables must be a JSON array, got ${describe(raw)}`);
    return { variables, errors };
  }
  const seen = new Set<string>();
  raw.forEach((entry: unknown, index) => {
    const name = entryName(entry, index);
    const parsed = definitionSchema.safeParse(entry);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) =>
        issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message,
      );
      errors.push(`${name}: ${problems.join("; ")}`);
      return;
    }
    const data = parsed.data;
    if (seen.has(data.id)) {
      errors.push(`${name}: duplicate id "${data.id}"`);
      return;
    }
    const definition: VariableDefinition = {
      id: data.id,
      type: data.type,
      label: data.label ?? data.id,
      default: data.default,
    };
    if (data.description !== undefined) definition.description = data.description;
    if (data.maxLength !== undefined) definition.maxLength = data.maxLength;
    if (data.min !== undefined) definition.min = data.min;
    if (data.max !== undefined) definition.max = data.max;
    if (data.step !== undefined) definition.step = data.step;
    if (data.options !== undefined) {
      definition.options = data.options.map((option) =>
        typeof option === "string"
          ? { value: option, label: option }
          : { value: option.value, label: option.label ?? option.value },
      );
    }
    if (definition.type === "enum" && (definition.options?.length ?? 0) === 0) {
      errors.push(`${name}: an enum needs a non-empty "options" list`);
      return;
    }
    if (definition.min !== undefined && definition.max !== undefined) {
      if (definition.min > definition.max) {
        errors.push(`${name}: min ${definition.min} is greater than max ${definition.max}`);
        return;
      }
    }
    // A default that breaks its own rules is reported but kept: the composition was written
    // against it, and dropping the variable would change the render more than the bad default.
    if (definition.default !== undefined) {
      const issue = checkValue(definition, definition.default);
      if (issue) errors.push(`${name}: default ${issue.message} (${issue.code})`);
    }
    seen.add(definition.id);
    variables.push(definition);
  });
  return { variables, errors };
}

/** Check values against the schema. Issues are warnings unless the caller is strict. */
/**
 * The issues that stop a render on the service (SPEC.md section 4): a wrong type, enum value or
 * range always; an undeclared key only with strict variables. The rest are warnings.
 */
export function blockingIssues(issues: VariableIssue[], strict: boolean): VariableIssue[] {
  return issues.filter((issue) => strict || issue.code !== "undeclared");
}

export function validateVariables(
  schema: VariableDefinition[],
  values: VariableValues,
): VariableIssue[] {
  const byId = new Map(schema.map((definition) => [definition.id, definition]));
  const issues: VariableIssue[] = [];
  for (const [id, value] of Object.entries(values)) {
    const definition = byId.get(id);
    if (!definition) {
      issues.push({ id, code: "undeclared", message: "is not declared by the composition" });
      continue;
    }
    const issue = checkValue(definition, value);
    if (issue) issues.push({ id, ...issue });
  }
  return issues;
}

/** Defaults merged with values (values win; undeclared keys are kept too). */
export function resolveVariables(
  schema: VariableDefinition[],
  values: VariableValues,
): VariableValues {
  const resolved: VariableValues = {};
  for (const definition of schema) {
    if (definition.default !== undefined) resolved[definition.id] = definition.default;
  }
  for (const [id, value] of Object.entries(values)) {
    if (value !== undefined) resolved[id] = value;
  }
  return resolved;
}

/** One line, e.g. `title: expected a string, got number 5 (type-mismatch)`. */
export function formatVariableIssue(issue: VariableIssue): string {
  return `${issue.id}: ${issue.message} (${issue.code})`;
}

const HEX_COLOR = /^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;

function checkValue(
  definition: VariableDefinition,
  value: unknown,
): Omit<VariableIssue, "id"> | undefined {
  const mismatch = (expected: string) => ({
    code: "type-mismatch" as const,
    message: `expected ${expected}, got ${describe(value)}`,
  });
  switch (definition.type) {
    case "string":
      if (typeof value !== "string") return mismatch("a string");
      if (definition.maxLength !== undefined && value.length > definition.maxLength) {
        return {
          code: "out-of-range",
          message: `is ${value.length} characters long, longer than maxLength ${definition.maxLength}`,
        };
      }
      return undefined;
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) return mismatch("a finite number");
      if (definition.min !== undefined && value < definition.min) {
        return { code: "out-of-range", message: `${value} is below min ${definition.min}` };
      }
      if (definition.max !== undefined && value > definition.max) {
        return { code: "out-of-range", message: `${value} is above max ${definition.max}` };
      }
      return undefined;
    case "color":
      if (typeof value !== "string" || !HEX_COLOR.test(value)) {
        return mismatch("a hex color (#rgb, #rgba, #rrggbb or #rrggbbaa)");
      }
      return undefined;
    case "boolean":
      return typeof value === "boolean" ? undefined : mismatch("a boolean");
    case "enum": {
      if (typeof value !== "string") return mismatch("a string");
      const allowed = (definition.options ?? []).map((option) => option.value);
      if (!allowed.includes(value)) {
        return {
          code: "enum-out-of-range",
          message: `${JSON.stringify(value)} is not one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}`,
        };
      }
      return undefined;
    }
    case "font":
      return typeof value === "string" ? undefined : mismatch("a font family name (string)");
    case "image":
      return typeof value === "string" ? undefined : mismatch("an image URL or path (string)");
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return `string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
    case "number":
    case "boolean":
    case "bigint":
      return `${typeof value} ${String(value)}`;
    case "undefined":
      return "undefined";
    default:
      return typeof value === "object" ? "an object" : typeof value;
  }
}

function entryName(entry: unknown, index: number): string {
  if (entry && typeof entry === "object" && "id" in entry && typeof entry.id === "string") {
    return `variable ${index} ("${entry.id}")`;
  }
  return `variable ${index}`;
}
