// One render from the service's history, with download (a fresh signed URL, as a queue job) and
// delete behind a confirmation.
import { useState } from "react";
import type { RenderRecord } from "../../shared/api";
import { useDeleteRender, useDownloadRender } from "../hooks/renders";
import { countOf, formatSeconds } from "../render-plan";
import { useUiStore } from "../store";
import { ErrorNote } from "./ErrorNote";

export function RenderRow({ render }: { render: RenderRecord }) {
  const [confirming, setConfirming] = useState(false);
  const remove = useDeleteRender();
  const download = useDownloadRender();
  const show = useUiStore((state) => state.show);
  const title = render.title ?? render.composition;
  return (
    <li className="render" aria-label={`Render ${title}`} data-render-id={render.render_id}>
      <div className="thumb" aria-hidden="true">
        {render.thumbnail_url ? <img src={render.thumbnail_url} alt="" loading="lazy" /> : null}
      </div>
      <div className="render-main">
        <div className="job-head">
          <strong>{title}</strong>
          <span className={`badge status-${render.status}`}>{render.status}</span>
        </div>
        <p className="muted">
          {new Date(render.created_at * 1000).toLocaleString()} ·{" "}
          {render.duration !== null ? formatSeconds(render.duration) : "–"} · {render.format} ·{" "}
          {render.resolution} · {render.aspect_ratio} · {countOf(render.credits_charged, "credit")}
        </p>
        {render.failure_message ? <p className="issue">{render.failure_message}</p> : null}
        <div className="actions">
          {render.status === "completed" ? (
            <button type="button" onClick={() => download.mutate(render.render_id)}>
              Download
            </button>
          ) : null}
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
        {download.error ? <ErrorNote error={download.error} /> : null}
        {remove.error ? <ErrorNote error={remove.error} /> : null}
      </div>
    </li>
  );
}
