// What the Queue's batch card shows, from the batch and its row queued renders, without React: how
// many rows are done, rendering, queued, failed or cancelled, the progress of the whole batch and
// an ETA from the rate it has moved at so far.
import type { BatchView, QueuedRenderView } from "../shared/ipc";

export interface BatchSummary {
  done: number;
  rendering: number;
  queued: number;
  failed: number;
  cancelled: number;
  /** 0..1 over all rows (a running row counts by how far along its stages it is). */
  progress: number;
  etaSeconds: number | undefined;
  /** Some row still waits or runs. */
  active: boolean;
}

/** How far along one row is, 0..1: render progress weighs most; the transfers little. */
export function rowProgress(queuedRender: QueuedRenderView): number {
  if (queuedRender.status === "completed") return 1;
  if (queuedRender.status !== "running") return 0;
  switch (queuedRender.stage) {
    case "rendering":
      return 0.1 + 0.8 * queuedRender.progress;
    case "download":
      return 0.9 + 0.1 * queuedRender.progress;
    case "queued":
      return 0.05;
    default:
      return 0;
  }
}

export function summarizeBatch(
  batch: BatchView,
  rows: QueuedRenderView[],
  now: number,
): BatchSummary {
  const count = (test: (queuedRender: QueuedRenderView) => boolean) => rows.filter(test).length;
  const running = (queuedRender: QueuedRenderView) => queuedRender.status === "running";
  const summary = {
    done: count((queuedRender) => queuedRender.status === "completed"),
    rendering: count(
      (queuedRender) =>
        running(queuedRender) && !["waiting", "queued"].includes(queuedRender.stage),
    ),
    queued: count(
      (queuedRender) =>
        queuedRender.status === "waiting" ||
        (running(queuedRender) && ["waiting", "queued"].includes(queuedRender.stage)),
    ),
    failed: count((queuedRender) => queuedRender.status === "failed"),
    cancelled: count((queuedRender) => queuedRender.status === "cancelled"),
  };
  const total = Math.max(1, batch.rowCount);
  const progress = rows.reduce((sum, queuedRender) => sum + rowProgress(queuedRender), 0) / total;
  const active = summary.queued + summary.rendering > 0;
  const started = Math.min(...rows.map((queuedRender) => queuedRender.startedAt ?? Infinity));
  const elapsed = Number.isFinite(started) ? (now - started) / 1000 : 0;
  // No guess until the batch has moved for a while: an early rate jumps around.
  const etaSeconds =
    active && progress > 0.02 && elapsed > 3
      ? Math.round((elapsed * (1 - progress)) / progress)
      : undefined;
  return { ...summary, progress, etaSeconds, active };
}
