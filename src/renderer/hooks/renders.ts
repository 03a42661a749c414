// The service's render history: pages of `renders.list` (newest first, as the service lists them)
// joined for infinite scroll; delete and download (a fresh signed URL, as a queue job).
import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import type { JobView } from "../../shared/ipc";
import { desktopApi } from "../transport";

const PAGE_SIZE = 25;
const RENDERS_KEY = ["renders.list"];

export function useRenders() {
  return useInfiniteQuery({
    queryKey: RENDERS_KEY,
    queryFn: ({ pageParam }) =>
      desktopApi()["renders.list"]({
        limit: PAGE_SIZE,
        ...(pageParam ? { token: pageParam } : {}),
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => (page.has_more && page.next_token ? page.next_token : undefined),
    retry: false,
  });
}

export function useDeleteRender() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (renderId: string) => desktopApi()["renders.delete"]({ renderId }),
    onSuccess: () => client.invalidateQueries({ queryKey: RENDERS_KEY }),
  });
}

export function useDownloadRender() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (renderId: string) => desktopApi()["renders.download"]({ renderId }),
    onSuccess: (job) =>
      client.setQueryData<JobView[]>(["jobs.list"], (jobs) => [
        job,
        ...(jobs ?? []).filter((j) => j.id !== job.id),
      ]),
  });
}

/** Call after something that adds a render (a finished job), so History shows it. */
export function useRefreshRenders() {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: RENDERS_KEY });
}
