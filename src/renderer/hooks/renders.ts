// The service's render history: pages of `renders.list` (newest first, as the service lists them)
// joined for infinite scroll; delete and download (a fresh signed URL, as a queued render).
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { RenderRecord } from "../../shared/api";
import type { IpcInput, QueuedRenderView } from "../../shared/ipc";
import type { VariableValues } from "../../shared/variables";
import { desktopApi } from "../transport";
import { mergeQueuedRender } from "./queued-renders";

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
    onSuccess: (queuedRender) =>
      client.setQueryData<QueuedRenderView[]>(["queue.list"], (queuedRenders) =>
        mergeQueuedRender(queuedRenders, queuedRender),
      ),
  });
}

/**
 * History's "Render again": the same uploaded project (asset id) and render options as `render`,
 * with new variable values, as a queued render that starts at queued (nothing is zipped or
 * uploaded).
 */
/** The variables a render's composition declares, read by the service from its asset. */
export function useRenderVariables(render: RenderRecord) {
  return useQuery({
    queryKey: ["renders.variables", render.asset_id, render.composition],
    queryFn: () =>
      desktopApi()["renders.variables"]({
        render: { asset_id: render.asset_id, composition: render.composition },
      }),
    retry: false,
    staleTime: Infinity,
  });
}

export function useRenderAgain() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (input: {
      render: RenderRecord;
      assetId: string;
      variables: VariableValues;
      strictVariables: boolean;
    }) =>
      desktopApi()["queue.submit"]({
        assetId: input.assetId,
        composition: input.render.composition,
        settings: {
          fps: input.render.fps,
          quality: input.render.quality,
          format: input.render.format,
          resolution: input.render.resolution,
          aspectRatio: input.render.aspect_ratio,
          variables: input.variables,
          strictVariables: input.strictVariables,
          ...(input.render.title ? { title: input.render.title } : {}),
        },
      }),
    onSuccess: (queuedRender) =>
      client.setQueryData<QueuedRenderView[]>(["queue.list"], (queuedRenders) =>
        mergeQueuedRender(queuedRenders, queuedRender),
      ),
  });
}

/** Parses the JSON editor's text: an object of variable values, or a one-line reason it is not. */
export function parseVariableValues(
  text: string,
): { ok: true; values: VariableValues } | { ok: false; problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `Not valid JSON: ${(error as Error).message}` };
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
    return { ok: false, problem: 'Write one JSON object, e.g. {"title": "Grace Hopper"}.' };
  return { ok: true, values: parsed as VariableValues };
}

/** Call after something that adds a render (a finished queued render), so History shows it. */

/**
 * The service's quote for these settings (frames, credits, time given its queue): asked again
 * when a setting changes; nothing is uploaded or spent. Off without a duration or with settings
 * the form already refuses.
 */
export function useRenderQuote(
  durationSeconds: number | undefined,
  settings: RenderQuoteSettings,
  enabled: boolean,
) {
  return useQuery({
    queryKey: ["renders.quote", durationSeconds, settings],
    queryFn: () =>
      desktopApi()["renders.quote"]({ durationSeconds: durationSeconds!, ...settings }),
    enabled: enabled && durationSeconds !== undefined && durationSeconds > 0,
    retry: false,
    staleTime: 10_000,
  });
}

export type RenderQuoteSettings = Omit<IpcInput<"renders.quote">, "durationSeconds">;
