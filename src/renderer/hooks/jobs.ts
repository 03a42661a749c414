// The render queue: `jobs.list` once, then every `job` event replaces its job in the cache (a
// copy with an older revision is dropped), so the Queue screen follows the main process live.
import { useEffect, useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { IpcInput, JobView } from "../../shared/ipc";
import { desktopApi } from "../transport";

const JOBS_KEY = ["jobs.list"];

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
 * A job from an IPC answer or event into the cached queue. Every writer goes through here: an
 * answer can reach the page after the job's later events (web mode sends them on another
 * connection), and putting it in as it is would show a finished job as Waiting for good.
 */
export const mergeJob = (jobs: JobView[] | undefined, job: JobView) => mergeByRevision(jobs, job);

export function useJobs() {
  const client = useQueryClient();
  useEffect(
    () =>
      desktopApi().on("job", (job: JobView) => {
        const before = client.getQueryData<JobView[]>(JOBS_KEY)?.find((j) => j.id === job.id);
        client.setQueryData<JobView[]>(JOBS_KEY, (jobs) => mergeJob(jobs, job));
        // A render that just finished (or got its render id) is news for History.
        if (before?.status !== job.status || before?.renderId !== job.renderId)
          void client.invalidateQueries({ queryKey: ["renders.list"] });
      }),
    [client],
  );
  return useQuery({
    queryKey: JOBS_KEY,
    queryFn: async () =>
      newestOf(await desktopApi()["jobs.list"](), client.getQueryData<JobView[]>(JOBS_KEY)).sort(
        (a, b) => b.createdAt - a.createdAt,
      ),
  });
}

function useJobAction<M extends "jobs.cancel" | "jobs.retry" | "jobs.redownload" | "jobs.submit">(
  method: M,
) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: IpcInput<M>) =>
      (desktopApi()[method] as (input: IpcInput<M>) => Promise<JobView>)(input),
    onSuccess: (job) => client.setQueryData<JobView[]>(JOBS_KEY, (jobs) => mergeJob(jobs, job)),
  });
}

export const useSubmitJob = () => useJobAction("jobs.submit");
export const useCancelJob = () => useJobAction("jobs.cancel");
export const useRetryJob = () => useJobAction("jobs.retry");
export const useRedownloadJob = () => useJobAction("jobs.redownload");

export function useRemoveJob() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (jobId: string) => desktopApi()["jobs.remove"]({ jobId }),
    onSuccess: ({ jobId }) =>
      client.setQueryData<JobView[]>(JOBS_KEY, (jobs) => jobs?.filter((job) => job.id !== jobId)),
  });
}

/** One file of a job with several outputs (`output` 0: the main video). */
export interface FileOfJob {
  jobId: string;
  output: number;
}

/** Opens a completed job's video (or another of its files) with the system's default app. */
export function useOpenJobFile() {
  return useMutation({
    mutationFn: (target: string | FileOfJob) =>
      desktopApi()["jobs.openFile"](typeof target === "string" ? { jobId: target } : target),
  });
}

export function useRevealFile() {
  return useMutation({
    mutationFn: (target: string | FileOfJob) =>
      desktopApi()["host.revealFile"](typeof target === "string" ? { jobId: target } : target),
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
