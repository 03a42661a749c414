// "Render many…": a table of variable values (a CSV or JSON file, or a table pasted from a
// spreadsheet) shown as a grid checked against the composition's schema: bad cells are marked
// where they are, unknown columns are named, every row shows its file name, and the total
// estimated credits are shown before the one upload and the renders are queued.
import { useEffect, useRef, useState } from "react";
import {
  CAPTION_COLUMNS,
  CAPTION_STYLE_COLUMN,
  CAPTIONS_COLUMN,
  PATTERN_FIELDS,
  captionStyleOf,
} from "../../shared/batch";
import { CAPTION_STYLE_LABELS, CAPTION_STYLES, DEFAULT_CAPTION_STYLE } from "../../shared/captions";
import { chooseRowCaptionFile, useBatchCaptions } from "../hooks/batch-captions";
import { useBatchCheck, useBatchImport, useSubmitBatch } from "../hooks/batch-table";
import { useProjectCaptions } from "../hooks/captions";
import { useProjectScan } from "../hooks/project";
import { countOf } from "../render-plan";
import { useUiStore } from "../store";
import { ErrorNote } from "./ErrorNote";
import { StrictToggle } from "./StrictToggle";
import { QueuedNote } from "./QueuedNote";

function cellText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

function TableImport() {
  const importTable = useBatchImport();
  const [pasted, setPasted] = useState("");
  // The reason a table cannot be read shows under the button, often past the window's edge.
  const problem = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (importTable.error) problem.current?.scrollIntoView({ block: "nearest" });
  }, [importTable.error]);
  return (
    <div className="batch-import">
      <label className="file-button">
        Choose a CSV or JSON file…
        <input
          type="file"
          className="sr-only"
          accept=".csv,.tsv,.txt,.json,text/csv,application/json"
          aria-label="Table file"
          onChange={(event) => {
            const file = event.target.files?.[0];
            if (file) importTable.mutate({ file });
            event.target.value = "";
          }}
        />
      </label>
      <details>
        <summary>Or paste a table</summary>
        <label>
          Table (a header line of variable ids, then one line per video)
          <textarea
            rows={5}
            value={pasted}
            placeholder={"title,accent\nGrace Hopper,#22aa44\nAlan Turing,#3366ff"}
            onChange={(event) => setPasted(event.target.value)}
          />
        </label>
        <button
          type="button"
          disabled={pasted.trim() === ""}
          onClick={() => importTable.mutate({ text: pasted })}
        >
          Use this table
        </button>
      </details>
      <div ref={problem}>
        {importTable.error ? (
          <ErrorNote error={importTable.error} title="The table cannot be read." />
        ) : null}
      </div>
    </div>
  );
}

/** A file's name without its folders: the grid shows creators names, never paths. */
function fileNameOf(path: string): string {
  return path.split(/[/\\]/).pop() ?? path;
}

/**
 * A row's captions: the file chosen for it here, else the file its table cell names in the
 * project, else the project's captions (or none); a file can be chosen or taken away.
 */
function CaptionsCell(props: {
  row: number;
  cell: string;
  disabled: boolean;
  projectHas: boolean;
  onClear: () => void;
}) {
  const { row, cell, disabled } = props;
  const chosen = useBatchCaptions((state) => state.byRow[row]);
  const forget = useBatchCaptions((state) => state.forget);
  const name = chosen?.fileName ?? (cell ? fileNameOf(cell) : undefined);
  return (
    <td className={chosen?.problem ? "bad-cell captions-cell" : "captions-cell"}>
      <span
        className={name ? "caption-file" : "caption-file muted"}
        data-testid={`captions-${row}`}
      >
        {name ?? (props.projectHas ? "The project's" : "None")}
      </span>
      <label className={`file-button small${disabled ? " disabled" : ""}`}>
        {name ? "Change…" : "Choose…"}
        <input
          type="file"
          className="sr-only"
          accept=".srt,.vtt,.json"
          aria-label={`Caption file of row ${row}`}
          disabled={disabled}
          onChange={(event) => {
            const file = event.target.files?.[0];
            if (file) void chooseRowCaptionFile(row, file);
            event.target.value = "";
          }}
        />
      </label>
      {name ? (
        <button
          type="button"
          className="small"
          aria-label={`No caption file for row ${row}`}
          disabled={disabled}
          onClick={() => {
            forget(row);
            props.onClear();
          }}
        >
          ×
        </button>
      ) : null}
      {chosen?.problem ? <small className="cell-issue">{chosen.problem}</small> : null}
    </td>
  );
}

function BatchGrid() {
  const checked = useBatchCheck()!;
  const all = useUiStore((state) => state.batch.table!);
  const setCell = useUiStore((state) => state.setBatchCell);
  const setDropped = useUiStore((state) => state.setBatchRowDropped);
  const scan = useProjectScan();
  const projectCaptions = useProjectCaptions(scan.data?.root);
  const batchStyle = CAPTION_STYLE_LABELS[projectCaptions?.style ?? DEFAULT_CAPTION_STYLE].name;
  // The captions columns have cells of their own kind, at the end (always there to fill in).
  const check = {
    ...checked.check,
    columns: checked.check.columns.filter(
      (column) => column.declared || !CAPTION_COLUMNS.includes(column.id),
    ),
  };
  return (
    <div className="batch-grid-wrap">
      <table className="batch-grid" aria-label="Batch rows">
        <thead>
          <tr>
            <th scope="col">Row</th>
            {check.columns.map((column) => (
              <th
                key={column.id}
                scope="col"
                className={column.declared ? undefined : "unknown-column"}
                title={column.declared ? column.id : "Not a variable of this composition"}
              >
                {column.label}
                {column.declared ? null : <small> not a variable</small>}
              </th>
            ))}
            <th scope="col" title="A subtitle file for this video (.srt, .vtt or .json)">
              Captions
            </th>
            <th scope="col">Caption look</th>
            <th scope="col">File</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {all.rows.map(({ row, cells }) => {
            const result = checked.byRow.get(row);
            const dropped = checked.dropped.has(row);
            const issues = new Map((result?.issues ?? []).map((issue) => [issue.id, issue]));
            const state = dropped ? "dropped" : checked.blocked.has(row) ? "blocked" : "ready";
            const styleIssue = issues.get(CAPTION_STYLE_COLUMN);
            const styleCell = cellText(cells[CAPTION_STYLE_COLUMN]);
            return (
              <tr key={row} aria-label={`Row ${row}`} className={`row-${state}`} data-state={state}>
                <th scope="row">{row}</th>
                {check.columns.map((column) => {
                  const issue = issues.get(column.id);
                  return (
                    <td key={column.id} className={issue ? "bad-cell" : undefined}>
                      <input
                        aria-label={`${column.label} of row ${row}`}
                        aria-invalid={issue ? true : undefined}
                        title={issue ? issue.message : undefined}
                        value={cellText(cells[column.id])}
                        disabled={dropped}
                        onChange={(event) => setCell(row, column.id, event.target.value)}
                      />
                      {issue ? <small className="cell-issue">{issue.message}</small> : null}
                    </td>
                  );
                })}
                <CaptionsCell
                  row={row}
                  cell={cellText(cells[CAPTIONS_COLUMN])}
                  disabled={dropped}
                  projectHas={projectCaptions !== undefined}
                  onClear={() => setCell(row, CAPTIONS_COLUMN, "")}
                />
                <td className={styleIssue ? "bad-cell" : undefined}>
                  <select
                    aria-label={`Caption look of row ${row}`}
                    aria-invalid={styleIssue ? true : undefined}
                    value={captionStyleOf(styleCell) ?? (styleCell ? "?" : "")}
                    disabled={dropped}
                    onChange={(event) => setCell(row, CAPTION_STYLE_COLUMN, event.target.value)}
                  >
                    <option value="">{`${batchStyle} (as for all)`}</option>
                    {CAPTION_STYLES.map((style) => (
                      <option key={style} value={style}>
                        {CAPTION_STYLE_LABELS[style].name}
                      </option>
                    ))}
                    {styleIssue ? <option value="?">{styleCell}</option> : null}
                  </select>
                  {styleIssue ? <small className="cell-issue">{styleIssue.message}</small> : null}
                </td>
                <td className="row-file">
                  {dropped ? (
                    <span className="muted">dropped</span>
                  ) : (
                    <span title={result?.fileName}>{result?.fileName}</span>
                  )}
                  {result?.duplicateOf !== undefined ? (
                    <small className="cell-issue">
                      The same file name as row {result.duplicateOf}
                    </small>
                  ) : null}
                </td>
                <td>
                  <button
                    type="button"
                    aria-label={`${dropped ? "Restore" : "Drop"} row ${row}`}
                    onClick={() => setDropped(row, !dropped)}
                  >
                    {dropped ? "Restore" : "Drop"}
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function RenderManyPanel() {
  const scan = useProjectScan();
  const source = useUiStore((state) => state.batch.source);
  const setOpen = useUiStore((state) => state.setBatchOpen);
  const setPattern = useUiStore((state) => state.setBatchPattern);
  const strict = useUiStore((state) => state.strictVariables);
  const setStrict = useUiStore((state) => state.setStrictVariables);
  const checked = useBatchCheck();
  const submit = useSubmitBatch();
  const columns = checked?.check.columns.map((column) => column.id) ?? [];
  // It opens under the project's two columns, usually below the fold: bring it into view. (A
  // block body: Chromium's scroll methods may return a promise, which is no effect cleanup.)
  const section = useRef<HTMLElement>(null);
  useEffect(() => {
    section.current?.scrollIntoView({ block: "start" });
  }, []);
  return (
    <section ref={section} className="panel render-many" aria-labelledby="render-many-title">
      <div className="panel-head">
        <h2 id="render-many-title">Render many</h2>
        <button type="button" onClick={() => setOpen(false)}>
          Close
        </button>
      </div>
      <p className="muted">
        One video per row of a table whose columns are variable ids
        {scan.data && scan.data.variables.length > 0
          ? ` (${scan.data.variables.map((v) => v.id).join(", ")})`
          : ""}
        . The project is uploaded once; every row renders against it with the render options above.
        Each video can have its own subtitle file and caption look: choose them in the table, or
        name them in columns called captions and caption_style.
      </p>
      <TableImport />
      {checked ? (
        <>
          <p className="batch-summary" role="status">
            {source}: {countOf(checked.table.rows.length, "row")} to render
            {checked.dropped.size > 0 ? ` (${checked.dropped.size} dropped)` : ""}
            {checked.check.blockedRows.length > 0
              ? ` · ${countOf(checked.check.blockedRows.length, "row")} to fix`
              : ""}
            {checked.credits !== undefined
              ? ` · about ${countOf(checked.credits, "credit")} in all (${countOf(checked.creditsEach ?? 0, "credit")} each)`
              : ""}
          </p>
          {checked.check.unknownColumns.length > 0 ? (
            <p className="warning">
              Not variables of this composition, so not sent:{" "}
              {checked.check.unknownColumns.map((c) => `“${c}”`).join(", ")}. They can still name
              files, e.g. {`{${checked.check.unknownColumns[0]}}`}.
            </p>
          ) : null}
          <div className="batch-options">
            <label>
              File name pattern
              <input
                value={checked.pattern}
                onChange={(event) => setPattern(event.target.value)}
                aria-describedby="pattern-help"
              />
            </label>
            <small id="pattern-help" className="muted">
              Placeholders: {[...PATTERN_FIELDS, ...columns].map((f) => `{${f}}`).join(" ")}. The
              extension is added; files go to a new folder in the downloads folder.
            </small>
            <StrictToggle checked={strict} onChange={setStrict} />
          </div>
          {checked.check.problems.length > 0 ? (
            <ul className="issue" aria-label="Table problems">
              {checked.check.problems.map((problem) => (
                <li key={problem}>{problem}</li>
              ))}
            </ul>
          ) : null}
          <BatchGrid />
          <div className="actions">
            <button
              type="button"
              className="primary"
              disabled={Boolean(checked.blockedBy) || submit.isPending}
              onClick={() => submit.mutate()}
            >
              Render {countOf(checked.rows, "video")}
            </button>
          </div>
          {checked.blockedBy ? <p className="issue">{checked.blockedBy}</p> : null}
        </>
      ) : (
        <p className="list-state empty">
          No table yet: choose a file or paste one. Its first line names the variables.
        </p>
      )}
      {submit.data ? (
        <QueuedNote title={`${submit.data.title} · ${countOf(submit.data.rowCount, "video")}`} />
      ) : null}
      {submit.error ? <ErrorNote error={submit.error} title="Could not start the batch." /> : null}
    </section>
  );
}
