// `svc cloud render DIR --batch rows.csv`: one video per row of a CSV/JSON table, all rendered
// against one upload. Every row is checked against the composition's schema before anything is
// uploaded (core/batch-plan.ts: a bad row is refused naming its row number); then core/batch.ts
// uploads once and renders `--concurrency` rows at a time. Results are one line per row on stdout (`--json`: one
// JSON object per line, then a summary object); exit 1 when any row failed, naming which.
import { basename, resolve } from "node:path";
import { formatBytes } from "../../shared/archive-report";
import { parseVariablesSchema, type VariableDefinition } from "../../shared/variables";
import { batchRowKey, runBatch, type BatchRowResult } from "../../core/index";
import { planBatchRows, readBatchTable, type PlannedRow } from "../../core/index";
import { dryRunProject, prepareProject } from "../../core/index";
import { newIdempotencyKey } from "../../core/index";
import { describeError, UsageError } from "../errors";
import type { CliIo } from "../io";
import { printArchiveReport } from "./archive-report";
import { CLI_KEY_PREFIX, withCloudContext } from "./context";
import { createCloudProgress } from "./progress";
import type { CloudRenderOptions } from "./render";

export interface CloudBatchOptions extends CloudRenderOptions {
  /** The table file (--batch). */
  batch: string;
  outputPattern?: string;
  concurrency: number;
}

/** What the batch reached, for the hint after Ctrl+C. */
export interface CloudBatchState {
  assetId?: string;
  key: string;
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

export function batchInterruptedHint(state: CloudBatchState): string {
  return state.assetId
    ? `Rows already submitted keep rendering on the service; run the same command with --idempotency-key ${state.key} to pick the batch up again without rendering any row twice.`
    : "Nothing was submitted; run the command again.";
}

/**
 * Plans, uploads and renders every row; prints one line per row and a summary, and sets exit
 * code 1 when a row failed. `state` is filled in as the batch goes (the asset once uploaded).
 */
export async function runCloudBatch(
  options: CloudBatchOptions,
  io: CliIo,
  state: CloudBatchState = { key: options.idempotencyKey ?? newIdempotencyKey(CLI_KEY_PREFIX) },
): Promise<{ assetId: string; results: BatchRowResult[] } | undefined> {
  const { project, settings } = options;
  const json = Boolean(options.json);
  const progress = createCloudProgress({ quiet: json, stream: io.stderr });
  const key = state.key;
  const words = { table: `--batch ${options.batch}`, pattern: "--output-pattern" };
  try {
    if (project.type === "url")
      throw new UsageError(
        "--batch renders a project folder or an uploaded asset (--asset-id), not --url.",
        "Publish the project once with `svc publish`, then use --asset-id with --batch.",
      );
    const table = await readBatchTable(options.batch, settings.variables ?? {}, words);
    try {
      batchRowKey(key, Math.max(...table.rows.map((r) => r.row)));
    } catch {
      throw new UsageError(
        "--idempotency-key is too long for a batch: each row's key adds `:row-N` to it.",
        "Use a key of at most 240 characters.",
      );
    }
    const outputDir = resolve(options.output ?? "renders");
    const plan = (schema: VariableDefinition[], name: string) =>
      planBatchRows(table, schema, {
        strict: Boolean(settings.strictVariables),
        pattern: options.outputPattern,
        format: settings.format ?? "mp4",
        project: name,
        file: options.batch,
        words,
      });
    let rows: PlannedRow[] | undefined;
    if (project.type === "dir") {
      // Everything local fails before a service is started or contacted.
      const scan = await prepareProject({ ...settings, variables: undefined, dir: project.dir });
      rows = plan(scan.variables, basename(scan.root));
      if (options.dryRun) {
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
        return undefined;
      }
    } else if (options.dryRun) {
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
          options.signal,
        );
        rows = plan(parseVariablesSchema(found.variables_json).variables, project.assetId);
      }
      const planned = rows!;
      if (!json)
        io.stderr.write(
          `Rendering ${planned.length} ${planned.length === 1 ? "row" : "rows"}, ${Math.min(options.concurrency, planned.length)} at a time, into ${outputDir}\n`,
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
            ...(row.captions ? { captions: row.captions } : {}),
            ...(row.captionStyle ? { captionStyle: row.captionStyle } : {}),
          })),
          concurrency: options.concurrency,
          wait: options.wait,
          idempotencyKey: key,
          titleOf: (row) =>
            `${settings.title ?? (project.type === "dir" ? basename(project.dir) : project.assetId)} · row ${row.row}`,
          pollIntervalMs: options.pollInterval * 1000,
          maxWaitMs: options.maxWait * 60_000,
        },
        {
          ...(options.signal ? { signal: options.signal } : {}),
          onEvent: (event) => {
            if (event.type === "publish") progress.onEvent(event.event);
            if (event.type === "asset") {
              progress.done();
              state.assetId = event.assetId;
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
          ? `${done} of ${results.results.length} rows ${options.wait ? "rendered" : "submitted"}; asset ${results.assetId} can be rendered again with --asset-id.\n`
          : `${done} of ${results.results.length} rows ${options.wait ? "rendered" : "submitted"}; failed: ${failed.map((r) => `row ${r.row}`).join(", ")}.\n`,
      );
    }
    if (failed.length > 0) io.exitCode = 1;
    return results;
  } finally {
    progress.done();
  }
}
