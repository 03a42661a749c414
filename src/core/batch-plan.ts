// Planning a batch before anything is uploaded (`svc cloud render DIR --batch rows.csv`): read
// the table file, merge in the values every row starts from, and check every row and the output
// pattern against the composition's schema (src/shared/batch.ts). A refusal is a usage error
// (exit 2 in the CLI) that names the caller's own words for the table and the pattern (`words`),
// except rows that do not match the composition, which are one `batch_invalid` error naming them.
import type { CaptionStyle } from "../shared/captions";
import { readFile } from "node:fs/promises";
import {
  checkBatch,
  defaultOutputPattern,
  describeBlockedRows,
  parseBatchTable,
  type BatchTable,
} from "../shared/batch";
import type { OutputFormat } from "../shared/render-options";
import type { VariableDefinition, VariableValues } from "../shared/variables";
import { ClientError } from "./errors";

/** How the caller names the table and the output pattern in its messages (e.g. its flags). */
export interface BatchWords {
  table: string;
  pattern: string;
}

export interface PlannedRow {
  row: number;
  values: VariableValues;
  fileName: string;
  /** The row's caption file inside the project (the table's `captions` column). */
  captions?: string | undefined;
  /** The row's caption style (the table's `caption_style` column). */
  captionStyle?: CaptionStyle | undefined;
}

/** Reads the table file, merging `common` in as values every row starts from. */
export async function readBatchTable(
  file: string,
  common: Record<string, unknown>,
  words: BatchWords,
): Promise<BatchTable> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    throw new ClientError(
      "batch_table_unreadable",
      `Cannot read ${words.table}.`,
      "Give a CSV file with a header line of variable ids, or a JSON array of objects.",
      { usage: true },
    );
  }
  const parsed = parseBatchTable(text);
  if (!parsed.ok) {
    throw new ClientError(
      "batch_table_invalid",
      `${words.table}: ${parsed.problem}`,
      "The first line names the variables (e.g. title,accent); each line after it is one video.",
      { usage: true },
    );
  }
  const extra = Object.keys(common).filter((id) => !parsed.table.columns.includes(id));
  return {
    columns: [...parsed.table.columns, ...extra],
    rows: parsed.table.rows.map(({ row, cells }) => ({ row, cells: { ...common, ...cells } })),
  };
}

/** Checks every row (and the pattern) against the schema; refuses before any upload. */
export function planBatchRows(
  table: BatchTable,
  schema: VariableDefinition[],
  options: {
    strict: boolean;
    pattern: string | undefined;
    format: OutputFormat;
    project: string;
    /** The table file, named in the hint when rows do not match. */
    file: string;
    words: BatchWords;
  },
): PlannedRow[] {
  const pattern = options.pattern ?? defaultOutputPattern(schema, table.columns);
  const check = checkBatch(schema, table, { ...options, pattern });
  const [problem] = check.problems;
  if (problem) {
    const strict = problem.startsWith("Strict");
    throw new ClientError(
      strict ? "batch_strict_columns" : "batch_pattern_invalid",
      strict ? problem : `${options.words.pattern}: ${problem}`,
      undefined,
      { usage: true },
    );
  }
  if (check.blocked) {
    const lines = describeBlockedRows(check);
    throw new ClientError(
      "batch_invalid",
      `${lines.length === 1 ? "1 row does" : `${lines.length} rows do`} not match the composition, so nothing was uploaded:\n  ${lines.join("\n  ")}`,
      `Fix ${lines.length === 1 ? "that row" : "those rows"} in ${options.file} (row 1 is the first line under the header) and run the command again.`,
    );
  }
  return check.rows.map((row) => ({
    row: row.row,
    values: row.values,
    fileName: row.fileName,
    ...(row.captions ? { captions: row.captions } : {}),
    ...(row.captionStyle ? { captionStyle: row.captionStyle } : {}),
  }));
}
