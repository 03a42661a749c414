// Queue: the app's render jobs and batches, newest first, updated live by the main process's
// `job` and `batch` events. A batch's rows are jobs too; they are shown inside its card.
import type { BatchView, JobView } from "../../shared/ipc";
import { BatchCard } from "../components/BatchCard";
import { JobCard } from "../components/JobCard";
import { ListState } from "../components/ListState";
import { useBatches } from "../hooks/batches";
import { useJobs, useNow } from "../hooks/jobs";
import { useUiStore } from "../store";

type QueueEntry =
  | { kind: "job"; job: JobView; createdAt: number }
  | { kind: "batch"; batch: BatchView; rows: JobView[]; createdAt: number };

function queueEntries(jobs: JobView[], batches: BatchView[]): QueueEntry[] {
  const rowsOf = new Map<string, JobView[]>(batches.map((batch) => [batch.id, []]));
  const entries: QueueEntry[] = [];
  for (const job of jobs) {
    const rows = job.batch ? rowsOf.get(job.batch.batchId) : undefined;
    if (rows) rows.push(job);
    else entries.push({ kind: "job", job, createdAt: job.createdAt });
  }
  for (const batch of batches)
    entries.push({ kind: "batch", batch, rows: rowsOf.get(batch.id)!, createdAt: batch.createdAt });
  return entries.sort((a, b) => b.createdAt - a.createdAt);
}

export function QueueScreen() {
  const jobs = useJobs();
  const batches = useBatches();
  const show = useUiStore((state) => state.show);
  const entries = queueEntries(jobs.data ?? [], batches.data ?? []);
  const now = useNow((jobs.data ?? []).some((job) => job.status === "running"));
  return (
    <div className="screen">
      <h2 className="screen-title">Queue</h2>
      <ListState
        label="the queue"
        isPending={jobs.isPending || batches.isPending}
        error={jobs.error ?? batches.error}
        isEmpty={entries.length === 0}
        onRetry={() => {
          void jobs.refetch();
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
        <ul className="jobs" aria-label="Jobs">
          {entries.map((entry) =>
            entry.kind === "job" ? (
              <JobCard key={entry.job.id} job={entry.job} now={now} />
            ) : (
              <BatchCard key={entry.batch.id} batch={entry.batch} rows={entry.rows} now={now} />
            ),
          )}
        </ul>
      </ListState>
    </div>
  );
}
