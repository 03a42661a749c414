// `svc cloud render DIR --batch rows.csv`: one video per row of a CSV/JSON table, all rendered
// against one upload. Every row is checked against the composition's schema before anything is
// uploaded (a bad row is refused naming its row number); then core/batch.ts uploads once and
// renders `--concurrency` rows at a time. Results are one line per row on stdout (`--json`: one
// JSON object per line, then a summary object); exit 1 when any row failed, naming which.
import { readFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { formatBytes } from "../shared/archive-report";
import {
  checkBatch,
  defaultOutputPattern,
  describeBlockedRows,
  parseBatchTable,
  type BatchTable,
} from "../shared/batch";
import { parseVariablesSchema, type VariableDefinition } from "../shared/variables";
import type { OutputFormat } from "../shared/render-options";
import { batchRowKey, runBatch, type BatchRowResult } from "../core/batch";
import { ClientError } from "../core/errors";
import { dryRunProject, prepareProject } from "../core/publish";
import type { ProjectSource, RenderSettings } from "../core/render-job";
import { newIdempotencyKey } from "../core/render-job";
import { CLI_KEY_PREFIX, interruptSignal, withCloudContext } from "./cloud-context";
import { createCloudProgress } from "./cloud-progress";
import { printArchiveReport } from "./archive-report";
import { describeError, reportError, UsageError } from "./errors";
import type { CliIo } from "./io";
import { withInterruptHint } from "./options";

export interface CloudBatchFlags {
  batch: string;
  outputPattern?: string;
  concurrency: number;
  output?: string;
  dryRun?: boolean;
  wait: boolean;
  pollInterval: number;
  maxWait: number;
  idempotencyKey?: string;
  json?: boolean;
}

/** Reads --batch FILE into a table, merging --variables in as values every row starts from. */
async function readTable(file: string, common: Record<string, unknown>): Promise<BatchTable> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    throw new UsageError(
      `Cannot read --batch ${file}.`,
      "Give a CSV file with a header line of variable ids, or a JSON array of objects.",
    );
  }
  const parsed = parseBatchTable(text);
  if (!parsed.ok)
    throw new UsageError(
      `--batch ${file}: ${parsed.problem}`,
      "The first line names the variables (e.g. title,accent); each line after it is one video.",
    );
  const extra = Object.keys(common).filter((id) => !parsed.table.columns.includes(id));
  return {
    columns: [...parsed.table.columns, ...extra],
    rows: parsed.table.rows.map(({ row, cells }) => ({ row, cells: { ...common, ...cells } })),
  };
}

interface PlannedRow {
  row: number;
  values: Record<string, unknown>;
  fileName: string;
}

/** Checks every row (and the pattern) against the schema; refuses before any upload. */
function planRows(
  file: string,
  table: BatchTable,
  schema: VariableDefinition[],
  options: { strict: boolean; pattern: string | undefined; format: OutputFormat; project: string },
): PlannedRow[] {
  const pattern = options.pattern ?? defaultOutputPattern(schema, table.columns);
  const check = checkBatch(schema, table, { ...options, pattern });
  const [problem] = check.problems;
  if (problem) {
    throw new UsageError(
      problem.startsWith("Strict") ? problem : `--output-pattern: ${problem}`,
      problem.startsWith("Strict")
        ? "Drop --strict-variables to leave such columns out, or use them in --output-pattern."
        : 'Example: --output-pattern "{title}-{row}"',
    );
  }
  if (check.blocked) {
    const lines = describeBlockedRows(check);
    throw new ClientError(
      "batch_invalid",
      `${lines.length === 1 ? "1 row does" : `${lines.length} rows do`} not match the composition, so nothing was uploaded:\n  ${lines.join("\n  ")}`,
      `Fix ${lines.length === 1 ? "that row" : "those rows"} in ${file} (row 1 is the first line under the header) and run the command again.`,
    );
  }
  return check.rows.map((row) => ({ row: row.row, values: row.values, fileName: row.fileName }));
}

function rowLine(result: BatchRowResult): string {
  if (result.status === "failed") {
    const described = describeError(result.error);
    return `row ${result.row}  failed     ${described.message}${described.hint ? ` (${described.hint})` : ""}`;
  }
  if (result.status === "queued") return `row ${result.row}  queued     ${result.renderId}`;
  return `row ${result.row}  completed  ${result.renderId} -> ${result.outputPath} (${formatBytes(result.sizeBytes ?? 0)}, ${result.record?.credits_charged ?? 0} credits)`;
}

function rowJson(result: BatchRowResult): Record<string, unknown> {
  const base = {
    row: result.row,
    status: result.status,
    render_id: result.renderId ?? null,
  };
  if (result.status === "failed") {
    const { exitCode: _code, ...error } = describeError(result.error);
    return { ...base, error };
  }
  return {
    ...base,
    output: result.outputPath ?? null,
    size_bytes: result.sizeBytes ?? null,
    credits_charged: result.record?.credits_charged ?? null,
  };
}

export async function runCloudBatch(
  io: CliIo,
  project: ProjectSource,
  settings: RenderSettings,
  flags: CloudBatchFlags,
): Promise<void> {
  const json = Boolean(flags.json);
  const interrupt = interruptSignal();
  const progress = createCloudProgress({ quiet: json, stream: io.stderr });
  let assetId: string | undefined;
  const key = flags.idempotencyKey ?? newIdempotencyKey(CLI_KEY_PREFIX);
  try {
    if (project.type === "url")
      throw new UsageError(
        "--batch renders a project folder or an uploaded asset (--asset-id), not --url.",
        "Publish the project once with `svc publish`, then use --asset-id with --batch.",
      );
    const table = await readTable(flags.batch, settings.variables ?? {});
    try {
      batchRowKey(key, Math.max(...table.rows.map((r) => r.row)));
    } catch {
      throw new UsageError(
        "--idempotency-key is too long for a batch: each row's key adds `:row-N` to it.",
        "Use a key of at most 240 characters.",
      );
    }
    const outputDir = resolve(flags.output ?? "renders");
    const plan = (schema: VariableDefinition[], name: string) =>
      planRows(flags.batch, table, schema, {
        strict: Boolean(settings.strictVariables),
        pattern: flags.outputPattern,
        format: settings.format ?? "mp4",
        project: name,
      });
    let rows: PlannedRow[] | undefined;
    if (project.type === "dir") {
      // Everything local fails before a service is started or contacted.
      const scan = await prepareProject({ ...settings, variables: undefined, dir: project.dir });
      rows = plan(scan.variables, basename(scan.root));
      if (flags.dryRun) {
        const report = await dryRunProject({ ...settings, variables: undefined, dir: project.dir });
        if (json)
          io.stdout.write(
            `${JSON.stringify({ archive: report, rows: rows.map((r) => ({ row: r.row, file: r.fileName, variables: r.values })) }, null, 2)}\n`,
          );
        else {
          printArchiveReport(io, report);
          for (const row of rows) io.stdout.write(`row ${row.row}  ${row.fileName}\n`);
        }
        if (report.exceeds_upload_limit) io.exitCode = 1;
        return;
      }
    } else if (flags.dryRun) {
      throw new UsageError(
        "--dry-run inspects a local project; it cannot be used with --asset-id or --url.",
      );
    }
    const results = await withCloudContext(io, async (context) => {
      if (!rows && project.type === "asset_id") {
        // The asset's composition declares the schema the rows are checked against.
        const found = await context.client.getAssetComposition(
          project.assetId,
          settings.composition,
          interrupt.signal,
        );
        rows = plan(parseVariablesSchema(found.variables_json).variables, project.assetId);
      }
      const planned = rows!;
      if (!json)
        io.stderr.write(
          `Rendering ${planned.length} ${planned.length === 1 ? "row" : "rows"}, ${Math.min(flags.concurrency, planned.length)} at a time, into ${outputDir}\n`,
        );
      return runBatch(
        {
          ...settings,
          client: context.client,
          project,
          rows: planned.map((row) => ({
            row: row.row,
            values: row.values,
            outputPath: resolve(outputDir, row.fileName),
          })),
          concurrency: flags.concurrency,
          wait: flags.wait,
          idempotencyKey: key,
          titleOf: (row) =>
            `${settings.title ?? (project.type === "dir" ? basename(project.dir) : project.assetId)} · row ${row.row}`,
          pollIntervalMs: flags.pollInterval * 1000,
          maxWaitMs: flags.maxWait * 60_000,
        },
        {
          signal: interrupt.signal,
          onEvent: (event) => {
            if (event.type === "publish") progress.onEvent(event.event);
            if (event.type === "asset") {
              progress.done();
              assetId = event.assetId;
            }
            if (event.type === "row-finished") {
              io.stdout.write(
                `${json ? JSON.stringify(rowJson(event.result)) : rowLine(event.result)}\n`,
              );
            }
          },
        },
      );
    });
    const failed = results.results.filter((result) => result.status === "failed");
    if (json) {
      io.stdout.write(
        `${JSON.stringify({
          summary: {
            asset_id: results.assetId,
            rows: results.results.length,
            completed: results.results.filter((r) => r.status === "completed").length,
            queued: results.results.filter((r) => r.status === "queued").length,
            failed: failed.map((r) => r.row),
          },
        })}\n`,
      );
    } else {
      const done = results.results.length - failed.length;
      io.stderr.write(
        failed.length === 0
          ? `${done} of ${results.results.length} rows ${flags.wait ? "rendered" : "submitted"}; asset ${results.assetId} can be rendered again with --asset-id.\n`
          : `${done} of ${results.results.length} rows ${flags.wait ? "rendered" : "submitted"}; failed: ${failed.map((r) => `row ${r.row}`).join(", ")}.\n`,
      );
    }
    if (failed.length > 0) io.exitCode = 1;
  } catch (error) {
    progress.done();
    reportError(
      withInterruptHint(
        error,
        assetId
          ? `Rows already submitted keep rendering on the service; run the same command with --idempotency-key ${key} to pick the batch up again without rendering any row twice.`
          : "Nothing was submitted; run the command again.",
      ),
      json,
      io,
    );
  } finally {
    interrupt.dispose();
  }
}
