// History: the service's renders, newest first, loading more pages as the list scrolls.
import { useEffect, useMemo, useRef } from "react";
import { ListState } from "../components/ListState";
import { RenderRow, type LocalRender } from "../components/RenderRow";
import { useQueuedRenders } from "../hooks/queued-renders";
import { useRenders } from "../hooks/renders";
import { IpcCallError, type QueuedRenderView } from "../../shared/ipc";
import { countOf } from "../render-plan";
import { useUiStore } from "../store";

const NOTHING_LOCAL: LocalRender = { file: undefined };

/** By render id: the app's own queued renders that downloaded it. */
function localRenders(queuedRenders: QueuedRenderView[]): Map<string, LocalRender> {
  const byRender = new Map<string, LocalRender>();
  for (const queuedRender of queuedRenders) {
    if (!queuedRender.renderId) continue;
    const known = byRender.get(queuedRender.renderId) ?? { file: undefined };
    if (
      queuedRender.status === "completed" &&
      queuedRender.outputPath &&
      !queuedRender.fileMissing &&
      !known.file
    )
      known.file = queuedRender;
    byRender.set(queuedRender.renderId, known);
  }
  return byRender;
}

export function HistoryScreen() {
  const renders = useRenders();
  const queuedRenders = useQueuedRenders();
  const local = useMemo(() => localRenders(queuedRenders.data ?? []), [queuedRenders.data]);
  const list = renders.data?.pages.flatMap((page) => page.data) ?? [];
  const sentinel = useRef<HTMLDivElement>(null);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = renders;
  const show = useUiStore((state) => state.show);
  const signedOut =
    renders.error instanceof IpcCallError && renders.error.code === "authentication_failed";
  useEffect(() => {
    const element = sentinel.current;
    if (!element || !hasNextPage) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting) && !isFetchingNextPage)
        void fetchNextPage();
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);
  return (
    <div className="screen">
      <div className="panel-head">
        <h2 className="screen-title">History</h2>
        <button type="button" onClick={() => void renders.refetch()} disabled={renders.isFetching}>
          Refresh
        </button>
      </div>
      {signedOut ? (
        <div className="list-state empty">
          <p>Sign in to see the renders of your account.</p>
          <button type="button" className="primary" onClick={() => show("account")}>
            Go to Account
          </button>
        </div>
      ) : (
        <ListState
          label="the render history"
          isPending={renders.isPending}
          error={renders.error}
          isEmpty={list.length === 0}
          onRetry={() => void renders.refetch()}
          empty={<p>The service has no renders for this account yet.</p>}
        >
          <ul className="renders" aria-label="Renders">
            {list.map((render) => (
              <RenderRow
                key={render.render_id}
                render={render}
                local={local.get(render.render_id) ?? NOTHING_LOCAL}
              />
            ))}
          </ul>
          <div ref={sentinel} className="list-end">
            {isFetchingNextPage ? (
              "Loading more…"
            ) : hasNextPage ? (
              <button type="button" onClick={() => void fetchNextPage()}>
                Load more
              </button>
            ) : (
              <span className="muted">{countOf(list.length, "render")}</span>
            )}
          </div>
        </ListState>
      )}
    </div>
  );
}
