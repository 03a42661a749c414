// Many renders of one template (`svc cloud render DIR --batch rows.csv`): the project is
// uploaded ONCE (or an uploaded asset is reused), then every row is rendered against that asset
// with its own variables, `concurrency` rows at a time, each downloaded to its own file name.
// The rows were checked before this runs (src/shared/batch.ts). Keys: the upload goes under the
// run's key and row N's render under `<key>:row-N`, so running the same batch again with the same
// key never creates a second asset or renders a row twice (the service replays the first answer).
// A row that fails does not stop the others; the caller reports which failed.
import type { RenderRecord } from "../shared/api";
import type { VariableValues } from "../shared/variables";
import type { ApiClient } from "./api-client";
import { interruptedError, type ClientError } from "./errors";
import { runRender, type RenderEvent } from "./pipeline";
import { publishProject, type PublishEvent } from "./publish";
import { checkIdempotencyKey, checkSettings, type RenderSettings } from "./render-job";

export interface BatchRow {
  /** The row's number in the table (the first data row is 1). */
  row: number;
  values: VariableValues;
  /** Where its video goes. */
  outputPath: string;
}

export interface BatchRunOptions extends Omit<RenderSettings, "variables" | "title"> {
  client: ApiClient;
  project: { type: "dir"; dir: string } | { type: "asset_id"; assetId: string };
  rows: BatchRow[];
  /** Rows rendered at once (each is submitted, polled and downloaded on its own). */
  concurrency: number;
  /** Submit every row and return without waiting for the videos. */
  wait?: boolean;
  idempotencyKey: string;
  /** The render's title on the service, per row. */
  titleOf?: (row: BatchRow) => string;
  pollIntervalMs?: number;
  maxWaitMs?: number;
  tempDir?: string;
}

export interface BatchRowResult {
  row: number;
  status: "completed" | "queued" | "failed";
  renderId: string | undefined;
  outputPath: string | undefined;
  sizeBytes: number | undefined;
  record: RenderRecord | undefined;
  error: ClientError | Error | undefined;
}

export type BatchEvent =
  | { type: "publish"; event: PublishEvent }
  | { type: "asset"; assetId: string }
  | { type: "row-submitted"; row: number; renderId: string }
  | { type: "row-progress"; row: number; event: RenderEvent }
  | { type: "row-finished"; result: BatchRowResult };

/** The key of row `row`'s render, from the batch's key. */
export function batchRowKey(key: string, row: number): string {
  return checkIdempotencyKey(`${key}:row-${row}`);
}

export async function runBatch(
  options: BatchRunOptions,
  hooks: { signal?: AbortSignal; onEvent?: (event: BatchEvent) => void } = {},
): Promise<{ assetId: string; results: BatchRowResult[] }> {
  const { signal } = hooks;
  const emit = (event: BatchEvent) => hooks.onEvent?.(event);
  checkSettings(options);
  checkIdempotencyKey(options.idempotencyKey);
  // The longest row key must fit too, before anything is uploaded.
  batchRowKey(options.idempotencyKey, Math.max(0, ...options.rows.map((r) => r.row)));

  let assetId: string;
  let aspectRatio = options.aspectRatio;
  if (options.project.type === "dir") {
    const published = await publishProject(
      options.client,
      {
        dir: options.project.dir,
        composition: options.composition,
        aspectRatio: options.aspectRatio,
        idempotencyKey: options.idempotencyKey,
        tempDir: options.tempDir,
      },
      { signal, onEvent: (event) => emit({ type: "publish", event }) },
    );
    assetId = published.assetId;
    aspectRatio = published.scan.aspectRatio;
  } else {
    assetId = options.project.assetId;
  }
  emit({ type: "asset", assetId });

  const results: BatchRowResult[] = [];
  const queue = [...options.rows];
  const renderRow = async (row: BatchRow): Promise<BatchRowResult> => {
    let renderId: string | undefined;
    try {
      const result = await runRender(
        {
          ...options,
          aspectRatio,
          client: options.client,
          project: { type: "asset_id", assetId },
          variables: row.values,
          title: options.titleOf?.(row),
          idempotencyKey: batchRowKey(options.idempotencyKey, row.row),
          output: row.outputPath,
          wait: options.wait ?? true,
        },
        {
          ...(signal ? { signal } : {}),
          onEvent: (event) => {
            if (event.type === "state" && event.state.renderId && !renderId) {
              renderId = event.state.renderId;
              emit({ type: "row-submitted", row: row.row, renderId });
            }
            emit({ type: "row-progress", row: row.row, event });
          },
        },
      );
      return {
        row: row.row,
        status: options.wait === false ? "queued" : "completed",
        renderId: result.renderId,
        outputPath: result.outputPath,
        sizeBytes: result.sizeBytes,
        record: result.record,
        error: undefined,
      };
    } catch (error) {
      if (signal?.aborted) throw error;
      return {
        row: row.row,
        status: "failed",
        renderId,
        outputPath: undefined,
        sizeBytes: undefined,
        record: undefined,
        error: error instanceof Error ? error : new Error(String(error)),
      };
    }
  };
  const worker = async () => {
    for (let row = queue.shift(); row; row = queue.shift()) {
      if (signal?.aborted) return;
      const result = await renderRow(row);
      results.push(result);
      emit({ type: "row-finished", result });
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(options.concurrency, queue.length)) });
  await Promise.all(workers.map(worker));
  if (signal?.aborted) throw interruptedError();
  return { assetId, results: results.sort((a, b) => a.row - b.row) };
}
