// Queue: the app's render jobs, newest first, updated live by the main process's `job` events.
import { JobCard } from "../components/JobCard";
import { ListState } from "../components/ListState";
import { useJobs, useNow } from "../hooks/jobs";
import { useUiStore } from "../store";

export function QueueScreen() {
  const jobs = useJobs();
  const show = useUiStore((state) => state.show);
  const list = [...(jobs.data ?? [])].sort((a, b) => b.createdAt - a.createdAt);
  const now = useNow(list.some((job) => job.status === "running"));
  return (
    <div className="screen">
      <h2 className="screen-title">Queue</h2>
      <ListState
        label="the queue"
        isPending={jobs.isPending}
        error={jobs.error}
        isEmpty={list.length === 0}
        onRetry={() => void jobs.refetch()}
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
          {list.map((job) => (
            <JobCard key={job.id} job={job} now={now} />
          ))}
        </ul>
      </ListState>
    </div>
  );
}
