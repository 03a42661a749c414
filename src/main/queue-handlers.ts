// The desktop queue's IPC methods: `queue.*` (single renders), `batches.*` (one render per data
// row) and `media.url` (playing a finished render: the downloaded file when there is one, else a
// fresh signed URL from the service). A folder is checked to be a project before it is queued.
import { basename } from "node:path";
import { checkBatch, describeBlockedRows } from "../shared/batch";
import type { MediaSource } from "../shared/ipc";
import { recordOutput } from "../core/index";
import { batchRowCaptions } from "./batch-captions";
import type { FileHost } from "./file-host";
import type { DesktopHost } from "./host";
import { appError } from "./ipc-errors";
import type { IpcHandlers } from "./ipc-router";
import type { RenderQueue } from "./render-queue";
import type { MediaServer } from "./media-server";
import { scanProjectFolder } from "./project-handlers";
import type { ServiceConnection } from "./service-connection";

type QueueHandlers = Pick<
  IpcHandlers,
  | "queue.submit"
  | "queue.cancel"
  | "queue.retry"
  | "queue.list"
  | "queue.redownload"
  | "queue.remove"
  | "queue.openFile"
  | "batches.submit"
  | "batches.list"
  | "batches.retryFailed"
  | "batches.cancel"
  | "batches.remove"
  | "batches.openFolder"
  | "media.url"
>;

export function queueHandlers(options: {
  queue: RenderQueue;
  connection: ServiceConnection;
  media: MediaServer;
  files: FileHost;
  host: DesktopHost;
}): QueueHandlers {
  const { queue, connection, media, files, host } = options;
  const scan = scanProjectFolder;

  /** A finished render's file (`output`: which one) from the service: a fresh signed URL. */
  const fromService = async (renderId: string, output = 0): Promise<MediaSource> => {
    const record = await (await connection.client()).getRender(renderId);
    const file = recordOutput(record, output);
    if (record.status !== "completed" || !file?.url)
      throw appError(
        "render_not_completed",
        `Render ${renderId} is ${record.status}; there is no video to play.`,
      );
    return { url: file.url, poster: file.thumbnail_url ?? undefined, source: "service" };
  };
  /** A downloaded file from the media server, with its thumbnail when it can be had. */
  const fromFile = async (queuedRenderId: string, output = 0): Promise<MediaSource | undefined> => {
    const file = await queue.outputFile(queuedRenderId, output).catch(() => undefined);
    if (!file) return undefined;
    const renderId = queue.get(queuedRenderId).renderId;
    const poster = renderId
      ? await connection
          .client()
          .then((client) => client.getRender(renderId))
          .then((record) => recordOutput(record, output)?.thumbnail_url ?? undefined)
          .catch(() => undefined)
      : undefined;
    return { url: await media.urlFor(file), poster, source: "file" };
  };

  return {
    "queue.submit": async (input) => {
      // The service checks an asset id (and the variables against its schema) when it is submitted.
      if ("assetId" in input) return queue.submitFromAsset(input);
      // Fail before queueing when the folder is not a project (the rest is checked when it runs).
      const project = await scan(input.dir, input.composition);
      return queue.submit({
        dir: project.root,
        composition: project.composition,
        settings: input.settings,
        outputDir: input.outputDir,
      });
    },
    "batches.submit": async (input) => {
      const project = await scan(input.dir, input.composition);
      // The renderer checked the rows; check again, since it is not trusted.
      const check = checkBatch(
        project.variables,
        { columns: input.columns, rows: input.rows },
        {
          strict: input.settings.strictVariables ?? false,
          pattern: input.outputPattern,
          format: input.settings.format,
          project: basename(project.root),
        },
      );
      if (check.blocked) {
        throw appError(
          "batch_invalid",
          [...check.problems, ...describeBlockedRows(check)].join(" "),
          "Fix or drop the rows marked in the table, then render again.",
        );
      }
      const captions = await batchRowCaptions(
        project.root,
        check.rows,
        new Map(input.rows.flatMap((row) => (row.captionCues ? [[row.row, row.captionCues]] : []))),
        input.settings.captions,
      );
      return queue.submitBatch({
        dir: project.root,
        composition: project.composition,
        settings: input.settings,
        rows: check.rows.map((row, index) => ({
          row: row.row,
          values: row.values,
          fileName: row.fileName,
          captions: captions[index],
        })),
        outputPattern: input.outputPattern,
        title: basename(project.root),
      });
    },
    "batches.list": async () => queue.listBatches(),
    "batches.retryFailed": ({ batchId }) => queue.retryFailedRows(batchId),
    "batches.cancel": ({ batchId }) => queue.cancelBatch(batchId),
    "batches.remove": async ({ batchId }) => {
      await queue.removeBatch(batchId);
      return { batchId };
    },
    "batches.openFolder": async ({ batchId }) => ({
      shown: await host.revealFile(await queue.batchFolder(batchId)),
    }),
    "media.url": async (input) => {
      const output = input.output ?? 0;
      if ("queuedRenderId" in input) {
        const queuedRender = queue.get(input.queuedRenderId);
        const local = await fromFile(queuedRender.id, output);
        if (local) return local;
        if (!queuedRender.renderId || queuedRender.status !== "completed")
          throw appError("queued_render_not_completed", "This render has no finished video yet.");
        return fromService(queuedRender.renderId, output);
      }
      const downloaded = queue
        .list()
        .find(
          (queuedRender) =>
            queuedRender.renderId === input.renderId && queuedRender.status === "completed",
        );
      return (
        (downloaded && (await fromFile(downloaded.id, output))) ??
        fromService(input.renderId, output)
      );
    },
    "queue.cancel": ({ queuedRenderId }) => queue.cancel(queuedRenderId),
    "queue.retry": ({ queuedRenderId }) => queue.retry(queuedRenderId),
    "queue.list": async () => queue.list(),
    "queue.redownload": ({ queuedRenderId }) => queue.redownload(queuedRenderId),
    "queue.remove": async ({ queuedRenderId }) => {
      await queue.remove(queuedRenderId);
      return { queuedRenderId };
    },
    "queue.openFile": async ({ queuedRenderId, output }) => {
      const file = await queue.outputFile(queuedRenderId, output);
      await files.openFile(file);
      return { opened: file };
    },
  };
}
