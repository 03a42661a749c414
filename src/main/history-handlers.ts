// The `renders.*` IPC methods: the service's render history (list, one render, its variables),
// price quotes, deleting a render and downloading one into the queue's folder.
import { parseVariablesSchema } from "../shared/variables";
import type { IpcHandlers } from "./ipc-router";
import type { RenderQueue } from "./render-queue";
import type { ServiceConnection } from "./service-connection";

type HistoryHandlers = Pick<
  IpcHandlers,
  | "renders.list"
  | "renders.get"
  | "renders.quote"
  | "renders.variables"
  | "renders.delete"
  | "renders.download"
>;

export function historyHandlers(options: {
  connection: ServiceConnection;
  queue: RenderQueue;
}): HistoryHandlers {
  const { connection, queue } = options;
  return {
    "renders.list": async ({ limit, token }) =>
      (await connection.client()).listRenders({
        ...(limit !== undefined ? { limit } : {}),
        ...(token !== undefined ? { token } : {}),
      }),
    "renders.get": async ({ renderId }) => (await connection.client()).getRender(renderId),
    "renders.quote": async ({
      durationSeconds,
      fps,
      quality,
      format,
      resolution,
      aspectRatio,
      outputs,
    }) =>
      (await connection.client()).quoteRender({
        duration: durationSeconds,
        fps,
        quality,
        format,
        resolution,
        ...(aspectRatio ? { aspect_ratio: aspectRatio } : {}),
        ...(outputs ? { outputs } : {}),
      }),
    "renders.variables": async ({ render }) => {
      const found = await (
        await connection.client()
      ).getAssetComposition(render.asset_id, render.composition);
      const schema = parseVariablesSchema(found.variables_json);
      return { variables: schema.variables, schemaErrors: schema.errors };
    },
    "renders.delete": async ({ renderId }) => {
      const deleted = await (await connection.client()).deleteRender(renderId);
      return { renderId: deleted.render_id };
    },
    "renders.download": async ({ renderId, outputDir }) => {
      const record = await (await connection.client()).getRender(renderId);
      return queue.downloadFromHistory(record, outputDir);
    },
  };
}
