// One queue job: where it is in the pipeline, progress within the stage (bar, percent and ETA),
// times, and what can be done with it now; a finished video plays inline. Which stages it shows:
// job-stages.ts (on this computer: Preparing · Rendering · Saving).
import { CANCEL_NOT_SENT, type JobView } from "../../shared/ipc";
import { stageIndex, stageLabel, stagesOf } from "../job-stages";
import {
  useCancelJob,
  useOpenJobFile,
  useRedownloadJob,
  useRemoveJob,
  useRetryJob,
  useRevealFile,
} from "../hooks/jobs";
import { formatBytes } from "../../shared/archive-report";
import { useServiceState } from "../hooks/app";
import { formatSeconds, settingsSummary } from "../render-plan";
import { ErrorNote } from "./ErrorNote";
import { InlineVideo, PlayButton, usePlayer } from "./InlinePlayer";
import { JobFiles } from "./OutputFiles";
import { PageWarnings } from "./PageWarnings";
import { ProgressLine } from "./ProgressLine";

export function JobCard({ job, now }: { job: JobView; now: number }) {
  const local = useServiceState().data?.mode === "local";
  const cancel = useCancelJob();
  const retry = useRetryJob();
  const redownload = useRedownloadJob();
  const remove = useRemoveJob();
  const reveal = useRevealFile();
  const openFile = useOpenJobFile();
  const stages = stagesOf(job, local);
  const active = job.status === "waiting" || job.status === "running";
  const currentIndex = stageIndex(job, stages, local);
  const elapsed = job.startedAt ? ((job.finishedAt ?? now) - job.startedAt) / 1000 : undefined;
  const speed =
    !local && job.bytes && job.stage === "upload" && elapsed && elapsed > 0
      ? job.bytes.done / elapsed
      : undefined;
  const player = usePlayer();
  // A render of several files lists each of them with its own actions (OutputFiles.tsx).
  const files =
    job.outputs && job.outputs.length > 1 ? { ...job, outputs: job.outputs } : undefined;
  const missing = job.fileMissing || (job.outputs?.some((output) => output.missing) ?? false);
  const facts = [
    elapsed !== undefined ? `elapsed ${formatSeconds(elapsed)}` : undefined,
    speed ? `${formatBytes(speed)}/s` : undefined,
    job.status === "completed" && job.sizeBytes ? formatBytes(job.sizeBytes) : undefined,
  ].filter((fact): fact is string => fact !== undefined);
  const actionError =
    cancel.error ??
    retry.error ??
    redownload.error ??
    remove.error ??
    reveal.error ??
    openFile.error;
  return (
    <li className={`job job-${job.status}`} aria-label={`Job ${job.title}`} data-job-id={job.id}>
      <div className="job-head">
        <strong className="job-title">{job.title}</strong>
        <span className={`badge status-${job.status}`} data-testid="job-stage">
          {stageLabel(job, local)}
        </span>
        <span className="muted">{settingsSummary(job.settings)}</span>
      </div>
      <ol className="stages" aria-label="Stages">
        {stages.map((step, index) => {
          const state =
            job.status === "completed" || index < currentIndex
              ? "done"
              : index !== currentIndex
                ? "todo"
                : active
                  ? "current"
                  : job.status === "failed"
                    ? "failed"
                    : "todo";
          return (
            <li
              key={step.stage}
              className={`stage stage-${state}`}
              data-state={state}
              aria-current={state === "current" ? "step" : undefined}
            >
              {step.label}
            </li>
          );
        })}
      </ol>
      {active ? (
        <ProgressLine
          label={`${stageLabel(job, local)} progress`}
          progress={job.progress}
          etaSeconds={job.etaSeconds}
        />
      ) : null}
      <p className="job-facts muted">{facts.join(" · ")}</p>
      {job.outputPath && job.status === "completed" && !files ? (
        <p className="path" data-testid="job-output">
          {job.outputPath}
          {job.fileMissing ? " (the file is no longer there)" : ""}
        </p>
      ) : null}
      {job.error ? <ErrorNote error={job.error} /> : null}
      <PageWarnings warnings={job.warnings} />
      <div className="actions">
        {active ? (
          <button type="button" onClick={() => cancel.mutate({ jobId: job.id })}>
            Cancel
          </button>
        ) : null}
        {job.status === "cancelled" && job.error?.code === CANCEL_NOT_SENT ? (
          <button type="button" onClick={() => cancel.mutate({ jobId: job.id })}>
            Stop on the service
          </button>
        ) : null}
        {job.status === "failed" || job.status === "cancelled" ? (
          <button type="button" onClick={() => retry.mutate({ jobId: job.id })}>
            Retry
          </button>
        ) : null}
        {job.status === "completed" && !files ? (
          <PlayButton open={player.open} onToggle={player.toggle} />
        ) : null}
        {job.status === "completed" && job.outputPath && !job.fileMissing && !files ? (
          <>
            <button type="button" onClick={() => openFile.mutate(job.id)}>
              Open file
            </button>
            <button type="button" onClick={() => reveal.mutate(job.id)}>
              Show in folder
            </button>
          </>
        ) : null}
        {job.status === "completed" && missing ? (
          <button type="button" onClick={() => redownload.mutate({ jobId: job.id })}>
            Download again
          </button>
        ) : null}
        {!active ? (
          <button type="button" onClick={() => remove.mutate(job.id)}>
            Remove from list
          </button>
        ) : null}
      </div>
      {files && job.status === "completed" ? <JobFiles job={files} /> : null}
      {actionError ? <ErrorNote error={actionError} /> : null}
      {player.open && job.status === "completed" && !files ? (
        <InlineVideo target={{ jobId: job.id }} title={job.title} />
      ) : null}
    </li>
  );
}
