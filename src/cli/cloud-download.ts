// `svc cloud download ID [-o FILE]`: re-attach to a render — wait for it if it is still running,
// then download the video (temp file + rename; a fresh signed URL each time).
import type { Command } from "commander";
import { formatBytes } from "../shared/archive-report";
import { defaultOutputPath, downloadRender } from "../core/download";
import { ClientError } from "../core/errors";
import { pollUntilTerminal, renderFailedError } from "../core/poll";
import { DEFAULT_MAX_WAIT_MINUTES, DEFAULT_POLL_INTERVAL_SECONDS } from "../shared/limits";
import { createCloudProgress } from "./cloud-progress";
import { interruptSignal, withCloudContext } from "./cloud-context";
import { reportError } from "./errors";
import { parseStrictInteger } from "./options";

interface DownloadFlags {
  output?: string;
  pollInterval: number;
  maxWait: number;
  json?: boolean;
}

export function registerCloudDownloadCommand(cloud: Command): void {
  cloud
    .command("download")
    .description("download a render's video, waiting for it first if it is still running")
    .argument("<id>", "render id (rndr_...)")
    .option("-o, --output <file>", "where to save the video (default: renders/<render_id>.<ext>)")
    .option(
      "--poll-interval <seconds>",
      "seconds between status checks",
      parseStrictInteger("--poll-interval", 1, 3600),
      DEFAULT_POLL_INTERVAL_SECONDS,
    )
    .option(
      "--max-wait <minutes>",
      "minutes to wait for the render",
      parseStrictInteger("--max-wait", 1, 10_080),
      DEFAULT_MAX_WAIT_MINUTES,
    )
    .option("--json", "print {render_id, output, size_bytes} as JSON")
    .action(async (id: string, flags: DownloadFlags) => {
      const json = Boolean(flags.json);
      const interrupt = interruptSignal();
      const progress = createCloudProgress({ quiet: json });
      try {
        const result = await withCloudContext(async ({ client }) => {
          let record = await client.getRender(id, interrupt.signal);
          if (record.status !== "completed" && record.status !== "failed") {
            progress.onEvent({ type: "stage", stage: "render" });
            record = await pollUntilTerminal(client, id, {
              intervalMs: flags.pollInterval * 1000,
              maxWaitMs: flags.maxWait * 60_000,
              signal: interrupt.signal,
              onUpdate: (update) => progress.onEvent({ type: "render-status", record: update }),
            });
          }
          if (record.status === "failed") throw renderFailedError(record);
          progress.onEvent({ type: "stage", stage: "download" });
          const output = flags.output ?? defaultOutputPath(record);
          return downloadRender(client, record, output, {
            signal: interrupt.signal,
            onProgress: (bytes, totalBytes) =>
              progress.onEvent({ type: "download-progress", bytes, totalBytes }),
          });
        });
        progress.done();
        process.stdout.write(
          json
            ? `${JSON.stringify({ render_id: id, output: result.path, size_bytes: result.sizeBytes }, null, 2)}\n`
            : `Downloaded ${id} -> ${result.path} (${formatBytes(result.sizeBytes)})\n`,
        );
      } catch (error) {
        progress.done();
        const interrupted = error instanceof ClientError && error.code === "interrupted";
        reportError(
          interrupted
            ? new ClientError(
                "interrupted",
                "Interrupted.",
                `Run \`svc cloud download ${id}\` again to finish.`,
              )
            : error,
          json,
        );
      } finally {
        interrupt.dispose();
      }
    });
}
