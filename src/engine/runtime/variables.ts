// Variables in the page (SPEC.md section 2): where a composition declares its schema, and how
// values reach the DOM — `data-var-text`, `data-var-src` and one CSS custom property per scalar on
// the composition's element. Parsing and validation live in src/shared/variables so the CLI, the
// service and the app form agree with the page.
import { isFontFile } from "../../shared/brand";
import { parseVariablesSchema, type VariableDefinition } from "../../shared/variables";
import { familyForFontFile } from "./fonts";

export const SCHEMA_ATTR = "data-composition-variables";

/**
 * The schema JSON of a composition whose variables may sit on `<html>` and/or its root element.
 * When both declare variables the two arrays are joined (root entries listed last, so they win).
 */
export function combinedSchemaJson(
  htmlElement: Element | null,
  rootElement: Element | null,
): string | null {
  const fromHtml = htmlElement?.getAttribute(SCHEMA_ATTR) ?? null;
  const fromRoot = rootElement?.getAttribute(SCHEMA_ATTR) ?? null;
  if (fromHtml === null || fromRoot === null || fromHtml === fromRoot) return fromRoot ?? fromHtml;
  try {
    const a: unknown = JSON.parse(fromHtml);
    const b: unknown = JSON.parse(fromRoot);
    if (Array.isArray(a) && Array.isArray(b)) {
      const rootIds = new Set(b.map((entry: { id?: unknown }) => entry?.id));
      return JSON.stringify([
        ...a.filter((entry: { id?: unknown }) => !rootIds.has(entry?.id)),
        ...b,
      ]);
    }
  } catch {
    // fall through: report the root's declaration, whose errors the parser will name
  }
  return fromRoot;
}

const schemaCache = new Map<string, { variables: VariableDefinition[]; errors: string[] }>();

/** parseVariablesSchema, memoized: getVariables() may be called often with the same schema. */
export function parseSchemaCached(json: string | null): {
  variables: VariableDefinition[];
  errors: string[];
} {
  if (json === null) return { variables: [], errors: [] };
  let parsed = schemaCache.get(json);
  if (!parsed) {
    parsed = parseVariablesSchema(json);
    schemaCache.set(json, parsed);
  }
  return parsed;
}

/** Parse a host's data-variable-values; bad JSON is a warning, not a failure. */
export function readHostValues(
  host: Element,
  warnings: string[],
  label: string,
): Record<string, unknown> {
  const raw = host.getAttribute("data-variable-values");
  if (raw === null || raw.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
    warnings.push(`${label}: data-variable-values must be a JSON object`);
  } catch (error) {
    warnings.push(`${label}: data-variable-values is not valid JSON (${(error as Error).message})`);
  }
  return {};
}

/**
 * The value of a variable as a CSS custom property, or undefined when it has none. A font file
 * (a `data:font/...` URL, the brand kit's) becomes the quoted family its bytes are drawn under.
 */
function cssValue(value: unknown): string | undefined {
  if (typeof value === "boolean") return value ? "1" : "0";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === "string" && isFontFile(value)) {
    const family = familyForFontFile(value);
    return family ? `"${family}"` : undefined;
  }
  if (typeof value === "string") return value === "" ? undefined : value;
  return undefined;
}

/** `--<id>` on the composition's element for every scalar value. */
export function applyCssVariables(element: HTMLElement, values: Record<string, unknown>): void {
  for (const [id, value] of Object.entries(values)) {
    const css = cssValue(value);
    if (css !== undefined) element.style.setProperty(`--${id}`, css);
  }
}

/** Apply `data-var-text` / `data-var-src` of one element; idempotent. */
export function bindElement(element: Element, values: Record<string, unknown>): void {
  const textId = element.getAttribute("data-var-text");
  if (textId !== null && textId in values) {
    const value = values[textId];
    const text = value === null || value === undefined ? "" : String(value);
    if (element.textContent !== text) element.textContent = text;
  }
  const srcId = element.getAttribute("data-var-src");
  if (srcId !== null && srcId in values) {
    const value = values[srcId];
    if (typeof value === "string" && value !== "" && element.getAttribute("src") !== value) {
      element.setAttribute("src", value);
    }
  }
}

export const BOUND_SELECTOR = "[data-var-text],[data-var-src]";
