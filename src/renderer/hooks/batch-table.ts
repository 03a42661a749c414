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
import { countOf, folderName, queuedRenderSettingsFrom, tickedSizes } from "../render-plan";
import { desktopApi } from "../transport";
import { useUiStore } from "../store";
import { useProjectScan } from "./project";
import { BATCHES_KEY } from "./batches";
import { mergeByRevision } from "./queued-renders";
import { useBatchCaptions } from "./batch-captions";
import { useProjectCaptions } from "./captions";

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
      // Files chosen for the rows of the previous table do not belong to this one.
      useBatchCaptions.getState().clear();
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
  const chosen = useBatchCaptions((state) => state.byRow);
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
    // A caption file chosen for a row that does not read as captions blocks that row too.
    const badCaptions = table.rows.filter((row) => chosen[row.row]?.problem).map((r) => r.row);
    const blocked = new Set([...check.blockedRows, ...badCaptions]);
    const blockedBy =
      rows === 0
        ? "Every row is dropped: restore a row to render it."
        : check.problems.length > 0
          ? "Fix the problems listed above the table first."
          : blocked.size > 0
            ? `Fix or drop the ${countOf(blocked.size, "row")} marked in the table first.`
            : undefined;
    return {
      table,
      check,
      pattern,
      rows,
      byRow: new Map(check.rows.map((row) => [row.row, row])),
      blocked,
      dropped,
      credits: batchCredits(rows, project.duration, render.resolution),
      creditsEach: batchCredits(1, project.duration, render.resolution),
      blockedBy,
    };
  }, [project, batch, strict, render.format, render.resolution, chosen]);
}

/** Queues the checked draft as a batch with the Project screen's render options. */
export function useSubmitBatch() {
  const client = useQueryClient();
  const scan = useProjectScan();
  const render = useUiStore((state) => state.render);
  const strict = useUiStore((state) => state.strictVariables);
  const checked = useBatchCheck();
  const projectCaptions = useProjectCaptions(scan.data?.root);
  const chosen = useBatchCaptions((state) => state.byRow);
  return useMutation({
    mutationFn: async (): Promise<BatchView> => {
      const project = scan.data;
      if (!project || !checked || checked.blockedBy) throw new Error("The table is not ready.");
      return desktopApi()["batches.submit"]({
        dir: project.root,
        composition: project.composition,
        // One video per row at the main size: the extra sizes and files are for a single render.
        settings: {
          ...queuedRenderSettingsFrom(
            {
              ...render,
              sizes: tickedSizes(render, project.aspectRatio).slice(0, 1),
              gif: false,
              poster: false,
            },
            { aspectRatio: project.aspectRatio, duration: project.duration },
          ),
          strictVariables: strict,
          // The project's captions (the Captions panel's) for rows without a file of their own.
          ...(projectCaptions
            ? { captions: { cues: projectCaptions.cues, style: projectCaptions.style } }
            : {}),
        },
        columns: checked.table.columns,
        rows: checked.table.rows.map((row) => {
          const cues = chosen[row.row]?.cues;
          return cues ? { ...row, captionCues: cues } : row;
        }),
        outputPattern: checked.pattern,
      });
    },
    onSuccess: (batch) =>
      client.setQueryData<BatchView[]>(BATCHES_KEY, (batches) =>
        mergeByRevision(batches, batch, "last"),
      ),
  });
}
