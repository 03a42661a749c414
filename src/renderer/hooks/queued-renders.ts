// The render queue: `queue.list` once, then every `queuedRender` event replaces its queued render
// in the cache (a copy with an older revision is dropped), so the Queue screen follows the main
// process live.
import { useEffect, useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { IpcInput, QueuedRenderView } from "../../shared/ipc";
import { desktopApi } from "../transport";

const QUEUED_RENDERS_KEY = ["queue.list"];

/** `item` in place of its older copy in `list` (a copy with an older revision is dropped). */
export function mergeByRevision<T extends { id: string; revision: number }>(
  list: T[] | undefined,
  item: T,
  where: "first" | "last" = "first",
): T[] {
  const items = list ?? [];
  const index = items.findIndex((existing) => existing.id === item.id);
  if (index === -1) return where === "first" ? [item, ...items] : [...items, item];
  if (items[index]!.revision > item.revision) return items;
  const next = [...items];
  next[index] = item;
  return next;
}

/**
 * A fetched list in place of the cached one, except that a cached copy newer than its fetched
 * one (an event that overtook the list's answer) is kept.
 */
export function newestOf<T extends { id: string; revision: number }>(
  fetched: T[],
  cached: T[] | undefined,
): T[] {
  const known = new Map(cached?.map((item) => [item.id, item]));
  return fetched.map((item) => {
    const copy = known.get(item.id);
    return copy && copy.revision > item.revision ? copy : item;
  });
}

/**
 * A queued render from an IPC answer or event into the cached queue. Every writer goes through
 * here: an answer can reach the page after the queued render's later events (web mode sends them on
 * another connection), and putting it in as it is would show a finished queued render as Waiting
 * for good.
 */
export const mergeQueuedRender = (
  queuedRenders: QueuedRenderView[] | undefined,
  queuedRender: QueuedRenderView,
) => mergeByRevision(queuedRenders, queuedRender);

export function useQueuedRenders() {
  const client = useQueryClient();
  useEffect(
    () =>
      desktopApi().on("queuedRender", (queuedRender: QueuedRenderView) => {
        const before = client
          .getQueryData<QueuedRenderView[]>(QUEUED_RENDERS_KEY)
          ?.find((j) => j.id === queuedRender.id);
        client.setQueryData<QueuedRenderView[]>(QUEUED_RENDERS_KEY, (queuedRenders) =>
          mergeQueuedRender(queuedRenders, queuedRender),
        );
        // A render that just finished (or got its render id) is news for History.
        if (before?.status !== queuedRender.status || before?.renderId !== queuedRender.renderId)
          void client.invalidateQueries({ queryKey: ["renders.list"] });
      }),
    [client],
  );
  return useQuery({
    queryKey: QUEUED_RENDERS_KEY,
    queryFn: async () =>
      newestOf(
        await desktopApi()["queue.list"](),
        client.getQueryData<QueuedRenderView[]>(QUEUED_RENDERS_KEY),
      ).sort((a, b) => b.createdAt - a.createdAt),
  });
}

function useQueuedRenderAction<
  M extends "queue.cancel" | "queue.retry" | "queue.redownload" | "queue.submit",
>(method: M) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: IpcInput<M>) =>
      (desktopApi()[method] as (input: IpcInput<M>) => Promise<QueuedRenderView>)(input),
    onSuccess: (queuedRender) =>
      client.setQueryData<QueuedRenderView[]>(QUEUED_RENDERS_KEY, (queuedRenders) =>
        mergeQueuedRender(queuedRenders, queuedRender),
      ),
  });
}

export const useSubmitQueuedRender = () => useQueuedRenderAction("queue.submit");
export const useCancelQueuedRender = () => useQueuedRenderAction("queue.cancel");
export const useRetryQueuedRender = () => useQueuedRenderAction("queue.retry");
export const useRedownloadQueuedRender = () => useQueuedRenderAction("queue.redownload");

export function useRemoveQueuedRender() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (queuedRenderId: string) => desktopApi()["queue.remove"]({ queuedRenderId }),
    onSuccess: ({ queuedRenderId }) =>
      client.setQueryData<QueuedRenderView[]>(QUEUED_RENDERS_KEY, (queuedRenders) =>
        queuedRenders?.filter((queuedRender) => queuedRender.id !== queuedRenderId),
      ),
  });
}

/** One file of a queued render with several outputs (`output` 0: the main video). */
export interface FileOfQueuedRender {
  queuedRenderId: string;
  output: number;
}

/** Opens a completed queued render's video (or another of its files) with the system's default app. */
export function useOpenQueuedRenderFile() {
  return useMutation({
    mutationFn: (target: string | FileOfQueuedRender) =>
      desktopApi()["queue.openFile"](
        typeof target === "string" ? { queuedRenderId: target } : target,
      ),
  });
}

export function useRevealFile() {
  return useMutation({
    mutationFn: (target: string | FileOfQueuedRender) =>
      desktopApi()["host.revealFile"](
        typeof target === "string" ? { queuedRenderId: target } : target,
      ),
  });
}

/** The current time, updated every second while `active` (for elapsed times). */
export function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}
