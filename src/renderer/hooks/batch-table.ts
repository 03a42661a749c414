// "Render many…" on the Project screen: reading a table (a CSV/JSON file or a pasted table), the
// shared check of every row against the composition's schema (src/shared/batch.ts, which the
// main process runs again), the estimated credits, and queueing the batch.
import { useMemo } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import {
  batchCredits,
  checkBatch,
  defaultOutputPattern,
  parseBatchTable,
  type BatchTable,
} from "../../shared/batch";
import type { BatchView } from "../../shared/ipc";
import { countOf, folderName, jobSettingsFrom, tickedSizes } from "../render-plan";
import { desktopApi } from "../transport";
import { useUiStore } from "../store";
import { useProjectScan } from "./project";
import { BATCHES_KEY } from "./batches";
import { mergeByRevision } from "./jobs";

/** Reads a table from a file or pasted text into the draft (or fails with what is wrong). */
export function useBatchImport() {
  const load = useUiStore((state) => state.loadBatchTable);
  return useMutation({
    mutationFn: async (input: { file: File } | { text: string }) => {
      const source = "file" in input ? input.file.name : "pasted table";
      const text = "file" in input ? await input.file.text() : input.text;
      const parsed = parseBatchTable(text);
      if (!parsed.ok) throw new Error(`${source}: ${parsed.problem}`);
      load(source, parsed.table);
      return parsed.table;
    },
  });
}

/** The draft checked against the open composition, what it would cost and why it is blocked. */
export function useBatchCheck() {
  const scan = useProjectScan();
  const batch = useUiStore((state) => state.batch);
  const strict = useUiStore((state) => state.strictVariables);
  const render = useUiStore((state) => state.render);
  const project = scan.data;
  return useMemo(() => {
    if (!project || !batch.table) return undefined;
    const dropped = new Set(batch.dropped);
    const table: BatchTable = {
      columns: batch.table.columns,
      rows: batch.table.rows.filter((row) => !dropped.has(row.row)),
    };
    const pattern = batch.pattern ?? defaultOutputPattern(project.variables, table.columns);
    const check = checkBatch(project.variables, table, {
      strict,
      pattern,
      format: render.format,
      project: folderName(project.root),
    });
    const rows = table.rows.length;
    const blockedBy =
      rows === 0
        ? "Every row is dropped: restore a row to render it."
        : check.problems.length > 0
          ? "Fix the problems listed above the table first."
          : check.blockedRows.length > 0
            ? `Fix or drop the ${countOf(check.blockedRows.length, "row")} marked in the table first.`
            : undefined;
    return {
      table,
      check,
      pattern,
      rows,
      byRow: new Map(check.rows.map((row) => [row.row, row])),
      dropped,
      credits: batchCredits(rows, project.duration, render.resolution),
      creditsEach: batchCredits(1, project.duration, render.resolution),
      blockedBy,
    };
  }, [project, batch, strict, render.format, render.resolution]);
}

/** Queues the checked draft as a batch with the Project screen's render options. */
export function useSubmitBatch() {
  const client = useQueryClient();
  const scan = useProjectScan();
  const render = useUiStore((state) => state.render);
  const strict = useUiStore((state) => state.strictVariables);
  const checked = useBatchCheck();
  return useMutation({
    mutationFn: async (): Promise<BatchView> => {
      const project = scan.data;
      if (!project || !checked || checked.blockedBy) throw new Error("The table is not ready.");
      return desktopApi()["batches.submit"]({
        dir: project.root,
        composition: project.composition,
        // One video per row at the main size: the extra sizes and files are for a single render.
        settings: {
          ...jobSettingsFrom(
            {
              ...render,
              sizes: tickedSizes(render, project.aspectRatio).slice(0, 1),
              gif: false,
              poster: false,
            },
            { aspectRatio: project.aspectRatio, duration: project.duration },
          ),
          strictVariables: strict,
        },
        columns: checked.table.columns,
        rows: checked.table.rows,
        outputPattern: checked.pattern,
      });
    },
    onSuccess: (batch) =>
      client.setQueryData<BatchView[]>(BATCHES_KEY, (batches) =>
        mergeByRevision(batches, batch, "last"),
      ),
  });
}
