// Queue: the app's queued renders and batches, newest first, updated live by the main process's
// `queuedRender` and `batch` events. A batch's rows are queued renders too; they are shown inside
// its card.
import type { BatchView, QueuedRenderView } from "../../shared/ipc";
import { BatchCard } from "../components/BatchCard";
import { QueuedRenderCard } from "../components/QueuedRenderCard";
import { ListState } from "../components/ListState";
import { useBatches } from "../hooks/batches";
import { useQueuedRenders, useNow } from "../hooks/queued-renders";
import { useUiStore } from "../store";

type QueueEntry =
  | { kind: "queuedRender"; queuedRender: QueuedRenderView; createdAt: number }
  | { kind: "batch"; batch: BatchView; rows: QueuedRenderView[]; createdAt: number };

function queueEntries(queuedRenders: QueuedRenderView[], batches: BatchView[]): QueueEntry[] {
  const rowsOf = new Map<string, QueuedRenderView[]>(batches.map((batch) => [batch.id, []]));
  const entries: QueueEntry[] = [];
  for (const queuedRender of queuedRenders) {
    const rows = queuedRender.batch ? rowsOf.get(queuedRender.batch.batchId) : undefined;
    if (rows) rows.push(queuedRender);
    else entries.push({ kind: "queuedRender", queuedRender, createdAt: queuedRender.createdAt });
  }
  for (const batch of batches)
    entries.push({ kind: "batch", batch, rows: rowsOf.get(batch.id)!, createdAt: batch.createdAt });
  return entries.sort((a, b) => b.createdAt - a.createdAt);
}

export function QueueScreen() {
  const queuedRenders = useQueuedRenders();
  const batches = useBatches();
  const show = useUiStore((state) => state.show);
  const entries = queueEntries(queuedRenders.data ?? [], batches.data ?? []);
  const now = useNow(
    (queuedRenders.data ?? []).some((queuedRender) => queuedRender.status === "running"),
  );
  return (
    <div className="screen">
      <h2 className="screen-title">Queue</h2>
      <ListState
        label="the queue"
        isPending={queuedRenders.isPending || batches.isPending}
        error={queuedRenders.error ?? batches.error}
        isEmpty={entries.length === 0}
        onRetry={() => {
          void queuedRenders.refetch();
          void batches.refetch();
        }}
        empty={
          <>
            <p>No renders yet.</p>
            <button type="button" className="link" onClick={() => show("project")}>
              Open a project to render one
            </button>
          </>
        }
      >
        <ul className="queued-renders" aria-label="Queued renders">
          {entries.map((entry) =>
            entry.kind === "queuedRender" ? (
              <QueuedRenderCard
                key={entry.queuedRender.id}
                queuedRender={entry.queuedRender}
                now={now}
              />
            ) : (
              <BatchCard key={entry.batch.id} batch={entry.batch} rows={entry.rows} now={now} />
            ),
          )}
        </ul>
      </ListState>
    </div>
  );
}
