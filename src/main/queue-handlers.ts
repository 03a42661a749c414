// The desktop queue's IPC methods: `jobs.*` (single renders), `batches.*` (one render per data
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
import type { JobManager } from "./job-manager";
import type { MediaServer } from "./media-server";
import { scanProjectFolder } from "./project-handlers";
import type { ServiceConnection } from "./service-connection";

type QueueHandlers = Pick<
  IpcHandlers,
  | "jobs.submit"
  | "jobs.cancel"
  | "jobs.retry"
  | "jobs.list"
  | "jobs.redownload"
  | "jobs.remove"
  | "jobs.openFile"
  | "batches.submit"
  | "batches.list"
  | "batches.retryFailed"
  | "batches.cancel"
  | "batches.remove"
  | "batches.openFolder"
  | "media.url"
>;

export function queueHandlers(options: {
  jobs: JobManager;
  connection: ServiceConnection;
  media: MediaServer;
  files: FileHost;
  host: DesktopHost;
}): QueueHandlers {
  const { jobs, connection, media, files, host } = options;
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
  const fromFile = async (jobId: string, output = 0): Promise<MediaSource | undefined> => {
    const file = await jobs.outputFile(jobId, output).catch(() => undefined);
    if (!file) return undefined;
    const renderId = jobs.get(jobId).renderId;
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
    "jobs.submit": async (input) => {
      // The service checks an asset id (and the variables against its schema) when it is submitted.
      if ("assetId" in input) return jobs.submitFromAsset(input);
      // Fail before queueing when the folder is not a project (the rest is checked when it runs).
      const project = await scan(input.dir, input.composition);
      return jobs.submit({
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
      return jobs.submitBatch({
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
    "batches.list": async () => jobs.listBatches(),
    "batches.retryFailed": ({ batchId }) => jobs.retryFailedRows(batchId),
    "batches.cancel": ({ batchId }) => jobs.cancelBatch(batchId),
    "batches.remove": async ({ batchId }) => {
      await jobs.removeBatch(batchId);
      return { batchId };
    },
    "batches.openFolder": async ({ batchId }) => ({
      shown: await host.revealFile(await jobs.batchFolder(batchId)),
    }),
    "media.url": async (input) => {
      const output = input.output ?? 0;
      if ("jobId" in input) {
        const job = jobs.get(input.jobId);
        const local = await fromFile(job.id, output);
        if (local) return local;
        if (!job.renderId || job.status !== "completed")
          throw appError("job_not_completed", "This job has no finished video yet.");
        return fromService(job.renderId, output);
      }
      const downloaded = jobs
        .list()
        .find((job) => job.renderId === input.renderId && job.status === "completed");
      return (
        (downloaded && (await fromFile(downloaded.id, output))) ??
        fromService(input.renderId, output)
      );
    },
    "jobs.cancel": ({ jobId }) => jobs.cancel(jobId),
    "jobs.retry": ({ jobId }) => jobs.retry(jobId),
    "jobs.list": async () => jobs.list(),
    "jobs.redownload": ({ jobId }) => jobs.redownload(jobId),
    "jobs.remove": async ({ jobId }) => {
      await jobs.remove(jobId);
      return { jobId };
    },
    "jobs.openFile": async ({ jobId, output }) => {
      const file = await jobs.outputFile(jobId, output);
      await files.openFile(file);
      return { opened: file };
    },
  };
}
