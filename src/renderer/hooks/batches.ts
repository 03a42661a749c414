// The queue's batches: `batches.list` once, then every `batch` event replaces its batch in the
// cache (an older revision is dropped), as hooks/queued-renders.ts does for queued renders; plus
// the batch card's actions. A batch's rows are ordinary queued renders (useQueuedRenders), told
// apart by `queuedRender.batch`.
import { useEffect } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { BatchView } from "../../shared/ipc";
import { desktopApi } from "../transport";
import { mergeByRevision, newestOf } from "./queued-renders";

export const BATCHES_KEY = ["batches.list"];

const mergeBatch = (batches: BatchView[] | undefined, batch: BatchView) =>
  mergeByRevision(batches, batch, "last");

export function useBatches() {
  const client = useQueryClient();
  useEffect(
    () =>
      desktopApi().on("batch", (batch: BatchView) =>
        client.setQueryData<BatchView[]>(BATCHES_KEY, (batches) => mergeBatch(batches, batch)),
      ),
    [client],
  );
  return useQuery({
    queryKey: BATCHES_KEY,
    queryFn: async () =>
      newestOf(await desktopApi()["batches.list"](), client.getQueryData<BatchView[]>(BATCHES_KEY)),
  });
}

function useBatchAction<M extends "batches.retryFailed" | "batches.cancel">(method: M) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (batchId: string) => desktopApi()[method]({ batchId }),
    onSuccess: (batch) =>
      client.setQueryData<BatchView[]>(BATCHES_KEY, (batches) => mergeBatch(batches, batch)),
  });
}

export const useRetryFailedRows = () => useBatchAction("batches.retryFailed");
export const useCancelBatch = () => useBatchAction("batches.cancel");

export function useRemoveBatch() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (batchId: string) => desktopApi()["batches.remove"]({ batchId }),
    onSuccess: ({ batchId }) => {
      client.setQueryData<BatchView[]>(BATCHES_KEY, (batches) =>
        batches?.filter((batch) => batch.id !== batchId),
      );
      void client.invalidateQueries({ queryKey: ["queue.list"] });
    },
  });
}

export function useOpenBatchFolder() {
  return useMutation({
    mutationFn: (batchId: string) => desktopApi()["batches.openFolder"]({ batchId }),
  });
}
