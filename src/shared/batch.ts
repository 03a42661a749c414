// Many videos from one template (a batch): a table whose columns are variable ids and whose rows
// are the values of one video each, read from CSV (or a table pasted from a spreadsheet) or JSON,
// checked against the composition's schema before anything is uploaded, with a file name for
// every row from an output-name pattern. One implementation for the app's "Render many…" grid,
// the main process (which checks again: the renderer is not trusted) and `svc cloud render
// --batch`, so all three refuse the same rows for the same reasons.
//
// Decisions: CSV cells are text, turned into the variable's type (numbers, true/false) before
// the shared validator sees them; an empty cell means the composition's default. A column the
// composition does not declare is never sent as a variable (it may still name files, e.g.
// `{name}`); strict mode refuses such a column unless the output-name pattern uses it. Rows keep
// the number they have in the table (the first data row is 1) even when others are dropped, so
// "row 8" means the same row to the person, the grid, the file names and the CLI's messages.
import Papa from "papaparse";
import { CAPTION_STYLE_LABELS, CAPTION_STYLES, type CaptionStyle } from "./captions";
import { creditsFor } from "./credits";
import { FILE_EXTENSIONS, type OutputFormat, type Resolution } from "./render-options";
import {
  validateVariables,
  type VariableDefinition,
  type VariableIssue,
  type VariableValues,
} from "./variables";

/**
 * A column of this name is not a variable: its cell names the row's caption file inside the project
 * (issue 37), rendered with the batch's caption style; an empty cell means the batch's captions.
 */
export const CAPTIONS_COLUMN = "captions";
/**
 * Nor is this one: the row's caption style (`band`, or its name in the app, `Band`); an empty cell
 * means the batch's style.
 */
export const CAPTION_STYLE_COLUMN = "caption_style";
/** The columns that are about a row's captions, never variables. */
export const CAPTION_COLUMNS: readonly string[] = [CAPTIONS_COLUMN, CAPTION_STYLE_COLUMN];

/** A caption style cell as a style: its id or its name in the app, any case; undefined if neither. */
export function captionStyleOf(cell: string): CaptionStyle | undefined {
  const text = cell.trim().toLowerCase();
  return CAPTION_STYLES.find(
    (style) => style === text || CAPTION_STYLE_LABELS[style].name.toLowerCase() === text,
  );
}

/** At most this many rows in one batch: every row is a render and a download. */
export const BATCH_MAX_ROWS = 1000;

/** One row as read: column id -> cell (text from CSV; any JSON value from JSON). */
export type BatchCells = Record<string, unknown>;

export interface BatchTable {
  columns: string[];
  rows: Array<{ row: number; cells: BatchCells }>;
}

export type ParsedBatchTable = { ok: true; table: BatchTable } | { ok: false; problem: string };

/**
 * Reads a table: JSON when the text starts with `[` (an array of objects), otherwise CSV with a
 * header line (comma, semicolon or tab separated; quoted cells may hold commas, quotes and line
 * breaks). Blank lines are skipped. Never throws.
 */
export function parseBatchTable(text: string): ParsedBatchTable {
  const trimmed = text.replace(/^\uFEFF/, "").trim();
  if (trimmed === "") return { ok: false, problem: "The table is empty." };
  return trimmed.startsWith("[") ? parseJsonTable(trimmed) : parseCsvTable(trimmed);
}

function parseJsonTable(text: string): ParsedBatchTable {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `The table is not valid JSON: ${(error as Error).message}` };
  }
  if (!Array.isArray(parsed))
    return { ok: false, problem: "A JSON table must be an array of objects, one per video." };
  const columns: string[] = [];
  const rows: BatchTable["rows"] = [];
  for (const [index, entry] of parsed.entries()) {
    if (!entry || typeof entry !== "object" || Array.isArray(entry))
      return { ok: false, problem: `Row ${index + 1} of the JSON table is not an object.` };
    const cells: BatchCells = {};
    for (const [key, value] of Object.entries(entry as Record<string, unknown>)) {
      const column = key.trim();
      if (!column) continue;
      if (!columns.includes(column)) columns.push(column);
      if (value !== null && value !== undefined) cells[column] = value;
    }
    rows.push({ row: index + 1, cells });
  }
  return finishTable(columns, rows);
}

function parseCsvTable(text: string): ParsedBatchTable {
  const result = Papa.parse<string[]>(text, { header: false, skipEmptyLines: "greedy" });
  const serious = result.errors.find((error) => error.type === "Quotes");
  if (serious) {
    return {
      ok: false,
      problem: `The CSV has an unclosed quote${serious.row !== undefined ? ` near row ${serious.row}` : ""}: ${serious.message}.`,
    };
  }
  const [header, ...body] = result.data;
  if (!header) return { ok: false, problem: "The table is empty." };
  const columns = header.map((name) => name.trim());
  const blank = columns.findIndex((name) => name === "");
  if (blank !== -1)
    return { ok: false, problem: `Column ${blank + 1} of the header line has no name.` };
  const duplicate = columns.find((name, index) => columns.indexOf(name) !== index);
  if (duplicate !== undefined)
    return { ok: false, problem: `The header names column "${duplicate}" twice.` };
  const rows: BatchTable["rows"] = [];
  for (const [index, cells] of body.entries()) {
    const row = index + 1;
    if (cells.length > columns.length && cells.slice(columns.length).some((c) => c.trim() !== ""))
      return {
        ok: false,
        problem: `Row ${row} has ${cells.length} cells but the header names ${columns.length} columns.`,
      };
    const values: BatchCells = {};
    columns.forEach((column, at) => {
      const cell = cells[at];
      if (cell !== undefined && cell.trim() !== "") values[column] = cell;
    });
    rows.push({ row, cells: values });
  }
  return finishTable(columns, rows);
}

function finishTable(columns: string[], rows: BatchTable["rows"]): ParsedBatchTable {
  if (columns.length === 0) return { ok: false, problem: "The table has no columns." };
  if (rows.length === 0) return { ok: false, problem: "The table has a header but no rows." };
  if (rows.length > BATCH_MAX_ROWS)
    return {
      ok: false,
      problem: `The table has ${rows.length} rows; a batch renders at most ${BATCH_MAX_ROWS}. Split it into several tables.`,
    };
  return { ok: true, table: { columns, rows } };
}

/**
 * A cell as the value of `definition`: text from CSV becomes a number or boolean when the
 * variable is one (and stays text when it does not read as one, for the validator to name).
 */
export function cellValue(definition: VariableDefinition, cell: unknown): unknown {
  if (typeof cell !== "string") return cell;
  const text = cell.trim();
  switch (definition.type) {
    case "number":
      return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(text) ? Number(text) : cell;
    case "boolean": {
      const lower = text.toLowerCase();
      if (["true", "yes", "1"].includes(lower)) return true;
      if (["false", "no", "0"].includes(lower)) return false;
      return cell;
    }
    default:
      return cell;
  }
}

/** The variable values of one row: declared columns only (in table order), in their types. */
export function rowVariables(schema: VariableDefinition[], cells: BatchCells): VariableValues {
  const declared = new Map(schema.map((definition) => [definition.id, definition]));
  const values: VariableValues = {};
  for (const [id, cell] of Object.entries(cells)) {
    const definition = declared.get(id);
    if (definition) values[id] = cellValue(definition, cell);
  }
  return values;
}

// ---------------------------------------------------------------- file names

const VIDEO_EXTENSIONS = Object.values(FILE_EXTENSIONS);
const PLACEHOLDER = /\{([^{}]*)\}/g;
// Control characters are what these two must find.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[/\\:*?"<>|\u0000-\u001f\u007f]+/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const RESERVED = /^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$/i;
const MAX_PART = 80;
const MAX_NAME = 180;

/** Placeholders a pattern may always use besides the table's columns. */
export const PATTERN_FIELDS = ["row", "project"] as const;

/** `{title}-{row}` when the table has the first declared text variable as a column. */
export function defaultOutputPattern(schema: VariableDefinition[], columns: string[]): string {
  const named = schema.find((d) => d.type === "string" && columns.includes(d.id));
  return named ? `{${named.id}}-{row}` : "{project}-{row}";
}

/** Why `pattern` cannot name files for a table with `columns`, or undefined when it can. */
export function patternProblem(
  pattern: string,
  columns: string[],
  format: OutputFormat,
): string | undefined {
  if (pattern.trim() === "") return "Write a file name pattern, e.g. {row}.";
  if (/[/\\]/.test(pattern))
    return "The pattern names a file, not a folder: leave out / and \\ (the files go to the batch's folder).";
  if (CONTROL.test(pattern)) return "The pattern has a control character in it.";
  if (/[{}]/.test(pattern.replace(PLACEHOLDER, "")))
    return "A { or } in the pattern is not closed; placeholders look like {row} or {title}.";
  for (const match of pattern.matchAll(PLACEHOLDER)) {
    const field = match[1]!.trim();
    if (!(PATTERN_FIELDS as readonly string[]).includes(field) && !columns.includes(field))
      return `The pattern uses {${field}}, which is not a column of the table (use {row}, {project} or one of: ${columns.join(", ")}).`;
  }
  const ending = /\.([a-z0-9]+)$/i.exec(pattern.trim())?.[1]?.toLowerCase();
  const extension = FILE_EXTENSIONS[format];
  if (ending && VIDEO_EXTENSIONS.includes(ending) && ending !== extension)
    return `The pattern ends in .${ending} but the format is ${format}: end it in .${extension} or leave the extension out.`;
  return undefined;
}

/** The columns `pattern` uses. */
export function patternColumns(pattern: string): string[] {
  return [...pattern.matchAll(PLACEHOLDER)].map((match) => match[1]!.trim());
}

/** A value as a safe piece of a file name: no separators, control or reserved characters. */
function safePart(value: unknown): string {
  const text = typeof value === "string" ? value : value === undefined ? "" : String(value);
  return text.normalize("NFC").replace(UNSAFE, "-").replace(/\s+/g, " ").trim().slice(0, MAX_PART);
}

/**
 * The file name of one row: placeholders filled with the row's values (a declared variable's
 * default when its cell is empty), made safe so it can only ever name a file inside the batch's
 * folder, and ending in the format's extension. Check the pattern with `patternProblem` first.
 */
export function fileNameFor(
  pattern: string,
  input: { row: number; project: string; values: BatchCells },
  format: OutputFormat,
): string {
  const extension = FILE_EXTENSIONS[format];
  let base = pattern.trim().replace(PLACEHOLDER, (_, name: string) => {
    const field = name.trim();
    if (field === "row") return String(input.row);
    if (field === "project") return safePart(input.project);
    return safePart(input.values[field]);
  });
  base = base.replace(UNSAFE, "-");
  if (base.toLowerCase().endsWith(`.${extension}`)) base = base.slice(0, -extension.length - 1);
  base = base
    .replace(/^[.\s-]+/, "")
    .replace(/[.\s]+$/, "")
    .slice(0, MAX_NAME);
  if (base === "") base = `row-${input.row}`;
  if (RESERVED.test(base)) base = `_${base}`;
  return `${base}.${extension}`;
}

// ---------------------------------------------------------------- the whole check

export interface BatchRowCheck {
  row: number;
  /** What is sent for this row: the declared columns, in their types. */
  values: VariableValues;
  /** Problems with cells of this row, by variable id. */
  issues: VariableIssue[];
  fileName: string;
  /** Another row would write the same file. */
  duplicateOf: number | undefined;
  /** This row cannot be rendered as it is. */
  blocked: boolean;
  /** The row's caption file inside the project (the `captions` column), if it names one. */
  captions?: string | undefined;
  /** The row's caption style (the `caption_style` column), if it names one. */
  captionStyle?: CaptionStyle | undefined;
}

export interface BatchCheck {
  columns: Array<{ id: string; declared: boolean; label: string }>;
  /** Columns the composition does not declare (never sent as variables). */
  unknownColumns: string[];
  /** Problems with the table as a whole (pattern, strict unknown columns), in words. */
  problems: string[];
  rows: BatchRowCheck[];
  blockedRows: number[];
  /** Nothing may be rendered until this is false. */
  blocked: boolean;
}

export interface BatchCheckOptions {
  strict: boolean;
  pattern: string;
  format: OutputFormat;
  /** The project's folder name, for `{project}`. */
  project: string;
}

/**
 * Checks every row against the schema and names its file. A wrong type, choice or range in a cell
 * always blocks its row (the service would refuse it); two rows with one file name block; with
 * `strict`, a column the composition does not declare blocks the batch unless the pattern uses it.
 */
export function checkBatch(
  schema: VariableDefinition[],
  table: BatchTable,
  options: BatchCheckOptions,
): BatchCheck {
  const declared = new Map(schema.map((definition) => [definition.id, definition]));
  const unknownColumns = table.columns.filter(
    (column) => !declared.has(column) && !CAPTION_COLUMNS.includes(column),
  );
  const problems: string[] = [];
  const pattern = patternProblem(options.pattern, table.columns, options.format);
  if (pattern) problems.push(pattern);
  if (options.strict) {
    const naming = new Set(patternColumns(options.pattern));
    const refused = unknownColumns.filter((column) => !naming.has(column));
    if (refused.length > 0)
      problems.push(
        `Strict variables: ${refused.map((c) => `"${c}"`).join(", ")} ${refused.length === 1 ? "is not a variable" : "are not variables"} of this composition. Rename or remove ${refused.length === 1 ? "the column" : "those columns"}, or turn strict variables off.`,
      );
  }
  const seen = new Map<string, number>();
  const rows = table.rows.map(({ row, cells }): BatchRowCheck => {
    const values = rowVariables(schema, cells);
    const issues = validateVariables(schema, values);
    const styleCell = declared.has(CAPTION_STYLE_COLUMN) ? undefined : cells[CAPTION_STYLE_COLUMN];
    const styleText = typeof styleCell === "string" ? styleCell.trim() : "";
    const captionStyle = styleText ? captionStyleOf(styleText) : undefined;
    if (styleText && !captionStyle)
      issues.push({
        id: CAPTION_STYLE_COLUMN,
        code: "enum-out-of-range",
        message: `"${styleText}" is not a caption style: use ${CAPTION_STYLES.map((style) => CAPTION_STYLE_LABELS[style].name).join(", ")}`,
      });
    const named = { ...cells };
    for (const definition of schema)
      if (!(definition.id in named) && definition.default !== undefined)
        named[definition.id] = definition.default;
    const fileName = pattern
      ? ""
      : fileNameFor(
          options.pattern,
          { row, project: options.project, values: named },
          options.format,
        );
    const key = fileName.toLowerCase();
    const duplicateOf = fileName ? seen.get(key) : undefined;
    if (fileName && duplicateOf === undefined) seen.set(key, row);
    const captionsCell = declared.has(CAPTIONS_COLUMN) ? undefined : cells[CAPTIONS_COLUMN];
    const captions =
      typeof captionsCell === "string" && captionsCell.trim() !== ""
        ? captionsCell.trim()
        : undefined;
    return {
      row,
      values,
      issues,
      fileName,
      duplicateOf,
      blocked: issues.length > 0 || duplicateOf !== undefined,
      ...(captions ? { captions } : {}),
      ...(captionStyle ? { captionStyle } : {}),
    };
  });
  const blockedRows = rows.filter((row) => row.blocked).map((row) => row.row);
  return {
    columns: table.columns.map((id) => ({
      id,
      declared: declared.has(id),
      label: declared.get(id)?.label ?? id,
    })),
    unknownColumns,
    problems,
    rows,
    blockedRows,
    blocked: problems.length > 0 || blockedRows.length > 0,
  };
}

/** One line per blocked row, e.g. `row 4: size: 400 is above max 96 (out-of-range)`. */
export function describeBlockedRows(check: BatchCheck): string[] {
  return check.rows
    .filter((row) => row.blocked)
    .map((row) => {
      const reasons = row.issues.map((issue) => `${issue.id}: ${issue.message} (${issue.code})`);
      if (row.duplicateOf !== undefined)
        reasons.push(`file name ${row.fileName} is the same as row ${row.duplicateOf}'s`);
      return `row ${row.row}: ${reasons.join("; ")}`;
    });
}

/** Credits for `rows` videos of `durationSeconds` each (the service's own rule, per video). */
export function batchCredits(
  rows: number,
  durationSeconds: number | undefined,
  resolution: Resolution,
): number | undefined {
  return durationSeconds === undefined ? undefined : rows * creditsFor(durationSeconds, resolution);
}
