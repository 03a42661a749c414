// One render from the service's history, played inline (the downloaded file, else a fresh signed
// URL), with download (a fresh signed URL, as a queued render),
// open / show in folder when this app downloaded it, "render again" with new variables against the
// same asset, and delete behind a confirmation.
import { useState } from "react";
import { CANCELLED_FAILURE_CODE, type RenderRecord } from "../../shared/api";
import type { QueuedRenderView } from "../../shared/ipc";
import { useOpenQueuedRenderFile, useRevealFile } from "../hooks/queued-renders";
import { useDeleteRender, useDownloadRender } from "../hooks/renders";
import { countOf, formatSeconds } from "../render-plan";
import { useUiStore } from "../store";
import { ErrorNote } from "./ErrorNote";
import { InlineVideo, PlayButton, usePlayer } from "./InlinePlayer";
import { RenderAgainForm } from "./RenderAgainForm";
import { RenderFiles } from "./OutputFiles";
import { PageWarnings, pageWarningsOf } from "./PageWarnings";

/** What this app knows about a render from its own queue. */
export interface LocalRender {
  /** A finished queued render whose video is still on disk: it can be opened or shown. */
  file: QueuedRenderView | undefined;
}

const STATUS_LABELS: Record<RenderRecord["status"], string> = {
  queued: "Queued",
  rendering: "Rendering",
  completed: "Done",
  failed: "Failed",
};

/** A render stopped with Cancel (the app's, `svc cloud cancel` or the API) is not a failure. */
export function renderStatusOf(render: RenderRecord): { label: string; className: string } {
  if (render.status === "failed" && render.failure_code === CANCELLED_FAILURE_CODE)
    return { label: "Cancelled", className: "status-cancelled" };
  return { label: STATUS_LABELS[render.status], className: `status-${render.status}` };
}

export function RenderRow({ render, local }: { render: RenderRecord; local: LocalRender }) {
  const [confirming, setConfirming] = useState(false);
  const [again, setAgain] = useState(false);
  const remove = useDeleteRender();
  const download = useDownloadRender();
  const openFile = useOpenQueuedRenderFile();
  const reveal = useRevealFile();
  const show = useUiStore((state) => state.show);
  const player = usePlayer();
  const title = render.title ?? render.composition;
  const status = renderStatusOf(render);
  const cancelled = status.label === "Cancelled";
  // A render of several files lists each of them with its own actions (OutputFiles.tsx).
  const several = render.outputs.length > 1;
  return (
    <li className="render" aria-label={`Render ${title}`} data-render-id={render.render_id}>
      <div className="thumb" aria-hidden="true">
        {render.thumbnail_url ? <img src={render.thumbnail_url} alt="" loading="lazy" /> : null}
      </div>
      <div className="render-main">
        <div className="queued-render-head">
          <strong>{title}</strong>
          <span className={`badge ${status.className}`} data-testid="render-status">
            {status.label}
          </span>
        </div>
        <p className="muted">
          {new Date(render.created_at * 1000).toLocaleString()} ·{" "}
          {render.duration !== null ? formatSeconds(render.duration) : "–"} · {render.format} ·{" "}
          {render.resolution} · {render.aspect_ratio} · {countOf(render.credits_charged, "credit")}
        </p>
        {cancelled ? (
          <p className="muted">Cancelled before it finished; nothing was charged.</p>
        ) : render.failure_message ? (
          <p className="issue">{render.failure_message}</p>
        ) : null}
        <PageWarnings warnings={pageWarningsOf(render)} />
        <div className="actions">
          {render.status === "completed" && !several ? (
            <>
              <PlayButton open={player.open} onToggle={player.toggle} />
              <button type="button" onClick={() => download.mutate(render.render_id)}>
                Download
              </button>
            </>
          ) : null}
          {render.status === "completed" && several ? (
            <button type="button" onClick={() => download.mutate(render.render_id)}>
              Download
            </button>
          ) : null}
          {local.file && !several ? (
            <>
              <button type="button" onClick={() => openFile.mutate(local.file!.id)}>
                Open file
              </button>
              <button type="button" onClick={() => reveal.mutate(local.file!.id)}>
                Show in folder
              </button>
            </>
          ) : null}
          <button type="button" aria-expanded={again} onClick={() => setAgain(!again)}>
            Render again…
          </button>
          {confirming ? (
            <span className="confirm" role="group" aria-label="Confirm delete">
              Delete this render from the service?
              <button
                type="button"
                className="danger"
                onClick={() => remove.mutate(render.render_id)}
              >
                Yes, delete
              </button>
              <button type="button" onClick={() => setConfirming(false)}>
                Keep it
              </button>
            </span>
          ) : (
            <button type="button" onClick={() => setConfirming(true)}>
              Delete…
            </button>
          )}
        </div>
        {download.data ? (
          <p className="ok">
            Downloading in the queue.{" "}
            <button type="button" className="link" onClick={() => show("queue")}>
              Show the queue
            </button>
          </p>
        ) : null}
        {several ? <RenderFiles render={render} localQueuedRender={local.file} /> : null}
        {player.open && !several ? (
          <InlineVideo target={{ renderId: render.render_id }} title={title} />
        ) : null}
        {again ? <RenderAgainForm render={render} onClose={() => setAgain(false)} /> : null}
        {download.error ? <ErrorNote error={download.error} /> : null}
        {openFile.error ? (
          <ErrorNote error={openFile.error} title="Could not open the video." />
        ) : null}
        {reveal.error ? <ErrorNote error={reveal.error} /> : null}
        {remove.error ? <ErrorNote error={remove.error} /> : null}
      </div>
    </li>
  );
}
