// One batch in the queue ("Render many…"): counts of its rows by state, the whole batch's progress
// and ETA, the one upload, each row's status (a finished row plays inline), and Retry failed,
// Cancel remaining, Open folder and Remove.
import type { BatchView, QueuedRenderView } from "../../shared/ipc";
import { summarizeBatch } from "../batch-plan";
import {
  useCancelBatch,
  useOpenBatchFolder,
  useRemoveBatch,
  useRetryFailedRows,
} from "../hooks/batches";
import { countOf, settingsSummary } from "../render-plan";
import { ErrorNote } from "./ErrorNote";
import { InlineVideo, PlayButton, usePlayer } from "./InlinePlayer";
import { ProgressLine } from "./ProgressLine";

const ROW_STATUS: Record<QueuedRenderView["status"], string> = {
  waiting: "Queued",
  running: "Running",
  completed: "Done",
  failed: "Failed",
  cancelled: "Cancelled",
};

function rowStatus(queuedRender: QueuedRenderView): string {
  if (queuedRender.status !== "running") return ROW_STATUS[queuedRender.status];
  switch (queuedRender.stage) {
    case "upload":
    case "zip":
      return "Waiting for the upload";
    case "queued":
      return "Queued on the service";
    case "rendering":
      return "Rendering";
    case "download":
      return "Downloading";
    default:
      return "Starting";
  }
}

function uploadText(batch: BatchView): string | undefined {
  switch (batch.upload.stage) {
    case "zip":
      return "Zipping the project (once for every row)…";
    case "upload":
      return `Uploading the project (once for every row): ${Math.round(batch.upload.progress * 100)}%`;
    case "done":
      return undefined;
    default:
      return undefined;
  }
}

function BatchRow({ queuedRender }: { queuedRender: QueuedRenderView }) {
  const player = usePlayer();
  const status = rowStatus(queuedRender);
  const running =
    queuedRender.status === "running" &&
    (queuedRender.stage === "rendering" || queuedRender.stage === "download");
  return (
    <li
      className={`batch-row batch-row-${queuedRender.status}`}
      aria-label={`Row ${queuedRender.batch?.row}`}
      data-status={queuedRender.status}
    >
      <div className="batch-row-line">
        <span className="row-number">{queuedRender.batch?.row}</span>
        <span className="row-file" title={queuedRender.batch?.fileName}>
          {queuedRender.batch?.fileName}
        </span>
        <span className={`badge status-${queuedRender.status}`} data-testid="row-status">
          {status}
        </span>
        {running ? (
          <ProgressLine
            label={`Row ${queuedRender.batch?.row} progress`}
            progress={queuedRender.progress}
            etaSeconds={queuedRender.etaSeconds}
          />
        ) : null}
        {queuedRender.status === "completed" ? (
          <PlayButton open={player.open} onToggle={player.toggle} />
        ) : null}
      </div>
      {queuedRender.error ? <p className="issue row-error">{queuedRender.error.message}</p> : null}
      {player.open && queuedRender.status === "completed" ? (
        <InlineVideo target={{ queuedRenderId: queuedRender.id }} title={queuedRender.title} />
      ) : null}
    </li>
  );
}

export function BatchCard({
  batch,
  rows,
  now,
}: {
  batch: BatchView;
  rows: QueuedRenderView[];
  now: number;
}) {
  const retry = useRetryFailedRows();
  const cancel = useCancelBatch();
  const openFolder = useOpenBatchFolder();
  const remove = useRemoveBatch();
  const summary = summarizeBatch(batch, rows, now);
  const upload = uploadText(batch);
  const sorted = [...rows].sort((a, b) => (a.batch?.row ?? 0) - (b.batch?.row ?? 0));
  const counts: Array<[string, number, string]> = [
    ["done", summary.done, "completed"],
    ["rendering", summary.rendering, "running"],
    ["queued", summary.queued, "queued"],
    ["failed", summary.failed, "failed"],
  ];
  if (summary.cancelled > 0) counts.push(["cancelled", summary.cancelled, "cancelled"]);
  const actionError = retry.error ?? cancel.error ?? openFolder.error ?? remove.error;
  return (
    <li
      className="queued-render batch"
      aria-label={`Batch ${batch.title}`}
      data-batch-id={batch.id}
    >
      <div className="queued-render-head">
        <strong className="queued-render-title">
          {batch.title} · {countOf(batch.rowCount, "video")}
        </strong>
        <span className="muted">{settingsSummary(batch.settings)}</span>
      </div>
      <ul className="batch-counts" aria-label="Row counts">
        {counts.map(([label, count, status]) => (
          <li key={label} className={`badge status-${status}`} data-testid={`count-${label}`}>
            {count} {label}
          </li>
        ))}
      </ul>
      {summary.active ? (
        <ProgressLine
          label="Batch progress"
          progress={summary.progress}
          etaSeconds={summary.etaSeconds}
        />
      ) : null}
      {upload ? <p className="muted">{upload}</p> : null}
      {batch.upload.error ? (
        <ErrorNote error={batch.upload.error} title="The upload failed." />
      ) : null}
      <p className="path" data-testid="batch-folder" title={batch.outputDir}>
        {batch.outputDir}
      </p>
      <div className="actions">
        {summary.failed + summary.cancelled > 0 ? (
          <button type="button" onClick={() => retry.mutate(batch.id)}>
            Retry failed
          </button>
        ) : null}
        {summary.active ? (
          <button type="button" onClick={() => cancel.mutate(batch.id)}>
            Cancel remaining
          </button>
        ) : null}
        <button type="button" onClick={() => openFolder.mutate(batch.id)}>
          Open folder
        </button>
        {!summary.active ? (
          <button type="button" onClick={() => remove.mutate(batch.id)}>
            Remove from list
          </button>
        ) : null}
      </div>
      {actionError ? <ErrorNote error={actionError} /> : null}
      <details className="batch-rows" open={batch.rowCount <= 30}>
        <summary>Rows ({batch.rowCount})</summary>
        <ol className="batch-row-list" aria-label="Rows">
          {sorted.map((queuedRender) => (
            <BatchRow key={queuedRender.id} queuedRender={queuedRender} />
          ))}
        </ol>
      </details>
    </li>
  );
}
