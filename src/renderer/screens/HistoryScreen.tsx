// History: the service's renders, newest first, loading more pages as the list scrolls.
import { useEffect, useRef } from "react";
import { ListState } from "../components/ListState";
import { RenderRow } from "../components/RenderRow";
import { useRenders } from "../hooks/renders";
import { IpcCallError } from "../../shared/ipc";
import { countOf } from "../render-plan";
import { useUiStore } from "../store";

export function HistoryScreen() {
  const renders = useRenders();
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
              <RenderRow key={render.render_id} render={render} />
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
