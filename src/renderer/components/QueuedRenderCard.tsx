// One queued render: where it is in the pipeline, progress within the stage (bar, percent and ETA),
// times, and what can be done with it now; a finished video plays inline. Which stages it shows:
// queued-render-stages.ts (on this computer: Preparing · Rendering · Saving).
import { CANCEL_NOT_SENT, type QueuedRenderView } from "../../shared/ipc";
import { stageIndex, stageLabel, stagesOf } from "../queued-render-stages";
import {
  useCancelQueuedRender,
  useOpenQueuedRenderFile,
  useRedownloadQueuedRender,
  useRemoveQueuedRender,
  useRetryQueuedRender,
  useRevealFile,
} from "../hooks/queued-renders";
import { formatBytes } from "../../shared/archive-report";
import { fileName } from "../creator-names";
import { useServiceState } from "../hooks/app";
import { formatSeconds, settingsSummary } from "../render-plan";
import { ErrorNote } from "./ErrorNote";
import { InlineVideo, PlayButton, usePlayer } from "./InlinePlayer";
import { QueuedRenderFiles } from "./OutputFiles";
import { PageWarnings } from "./PageWarnings";
import { ProgressLine } from "./ProgressLine";

export function QueuedRenderCard({
  queuedRender,
  now,
}: {
  queuedRender: QueuedRenderView;
  now: number;
}) {
  const local = useServiceState().data?.mode === "local";
  const cancel = useCancelQueuedRender();
  const retry = useRetryQueuedRender();
  const redownload = useRedownloadQueuedRender();
  const remove = useRemoveQueuedRender();
  const reveal = useRevealFile();
  const openFile = useOpenQueuedRenderFile();
  const stages = stagesOf(queuedRender, local);
  const active = queuedRender.status === "waiting" || queuedRender.status === "running";
  const currentIndex = stageIndex(queuedRender, stages, local);
  const elapsed = queuedRender.startedAt
    ? ((queuedRender.finishedAt ?? now) - queuedRender.startedAt) / 1000
    : undefined;
  const speed =
    !local && queuedRender.bytes && queuedRender.stage === "upload" && elapsed && elapsed > 0
      ? queuedRender.bytes.done / elapsed
      : undefined;
  const player = usePlayer();
  // A render of several files lists each of them with its own actions (OutputFiles.tsx).
  const files =
    queuedRender.outputs && queuedRender.outputs.length > 1
      ? { ...queuedRender, outputs: queuedRender.outputs }
      : undefined;
  const missing =
    queuedRender.fileMissing || (queuedRender.outputs?.some((output) => output.missing) ?? false);
  const facts = [
    elapsed !== undefined ? `elapsed ${formatSeconds(elapsed)}` : undefined,
    speed ? `${formatBytes(speed)}/s` : undefined,
    queuedRender.status === "completed" && queuedRender.sizeBytes
      ? formatBytes(queuedRender.sizeBytes)
      : undefined,
  ].filter((fact): fact is string => fact !== undefined);
  const actionError =
    cancel.error ??
    retry.error ??
    redownload.error ??
    remove.error ??
    reveal.error ??
    openFile.error;
  return (
    <li
      className={`queued-render queued-render-${queuedRender.status}`}
      aria-label={`Queued render ${queuedRender.title}`}
      data-queued-render-id={queuedRender.id}
    >
      <div className="queued-render-head">
        <strong className="queued-render-title">{queuedRender.title}</strong>
        <span className={`badge status-${queuedRender.status}`} data-testid="queued-render-stage">
          {stageLabel(queuedRender, local)}
        </span>
        <span className="muted">{settingsSummary(queuedRender.settings)}</span>
      </div>
      <ol className="stages" aria-label="Stages">
        {stages.map((step, index) => {
          const state =
            queuedRender.status === "completed" || index < currentIndex
              ? "done"
              : index !== currentIndex
                ? "todo"
                : active
                  ? "current"
                  : queuedRender.status === "failed"
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
          label={`${stageLabel(queuedRender, local)} progress`}
          progress={queuedRender.progress}
          etaSeconds={queuedRender.etaSeconds}
        />
      ) : null}
      <p className="queued-render-facts muted">{facts.join(" · ")}</p>
      {queuedRender.outputPath && queuedRender.status === "completed" && !files ? (
        <p className="path" data-testid="queued-render-output" data-path={queuedRender.outputPath}>
          {fileName(queuedRender.outputPath)}
          {queuedRender.fileMissing ? " (the file is no longer there)" : ""}
        </p>
      ) : null}
      {queuedRender.error ? <ErrorNote error={queuedRender.error} /> : null}
      <PageWarnings warnings={queuedRender.warnings} />
      <div className="actions">
        {active ? (
          <button type="button" onClick={() => cancel.mutate({ queuedRenderId: queuedRender.id })}>
            Cancel
          </button>
        ) : null}
        {queuedRender.status === "cancelled" && queuedRender.error?.code === CANCEL_NOT_SENT ? (
          <button type="button" onClick={() => cancel.mutate({ queuedRenderId: queuedRender.id })}>
            Stop on the service
          </button>
        ) : null}
        {queuedRender.status === "failed" || queuedRender.status === "cancelled" ? (
          <button type="button" onClick={() => retry.mutate({ queuedRenderId: queuedRender.id })}>
            Retry
          </button>
        ) : null}
        {queuedRender.status === "completed" && !files ? (
          <PlayButton open={player.open} onToggle={player.toggle} />
        ) : null}
        {queuedRender.status === "completed" &&
        queuedRender.outputPath &&
        !queuedRender.fileMissing &&
        !files ? (
          <>
            <button type="button" onClick={() => openFile.mutate(queuedRender.id)}>
              Open file
            </button>
            <button type="button" onClick={() => reveal.mutate(queuedRender.id)}>
              Show in folder
            </button>
          </>
        ) : null}
        {queuedRender.status === "completed" && missing ? (
          <button
            type="button"
            onClick={() => redownload.mutate({ queuedRenderId: queuedRender.id })}
          >
            Download again
          </button>
        ) : null}
        {!active ? (
          <button type="button" onClick={() => remove.mutate(queuedRender.id)}>
            Remove from list
          </button>
        ) : null}
      </div>
      {files && queuedRender.status === "completed" ? (
        <QueuedRenderFiles queuedRender={files} />
      ) : null}
      {actionError ? <ErrorNote error={actionError} /> : null}
      {player.open && queuedRender.status === "completed" && !files ? (
        <InlineVideo target={{ queuedRenderId: queuedRender.id }} title={queuedRender.title} />
      ) : null}
    </li>
  );
}
