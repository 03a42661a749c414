// `svc cloud download ID [-o FILE]`: re-attach to a render — wait for it if it is still running,
// then download the video (temp file + rename; a fresh signed URL each time).
import type { Command } from "commander";
import { formatBytes } from "../shared/archive-report";
import { defaultOutputPath } from "../core/download";
import { ClientError } from "../core/errors";
import { finishRender } from "../core/pipeline";
import { DEFAULT_MAX_WAIT_MINUTES, DEFAULT_POLL_INTERVAL_SECONDS } from "../shared/limits";
import { createCloudProgress } from "./cloud-progress";
import { interruptSignal, withCloudContext } from "./cloud-context";
import { reportError } from "./errors";
import { parseStrictInteger } from "./options";
import type { CliIo } from "./io";

interface DownloadFlags {
  output?: string;
  pollInterval: number;
  maxWait: number;
  json?: boolean;
}

export function registerCloudDownloadCommand(cloud: Command, io: CliIo): void {
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
      const progress = createCloudProgress({ quiet: json, stream: io.stderr });
      try {
        const result = await withCloudContext(io, ({ client }) =>
          finishRender(client, id, {
            pollIntervalMs: flags.pollInterval * 1000,
            maxWaitMs: flags.maxWait * 60_000,
            signal: interrupt.signal,
            outputPath: (record) => flags.output ?? defaultOutputPath(record),
            onEvent: (event) => progress.onEvent(event),
          }),
        );
        progress.done();
        io.stdout.write(
          json
            ? `${JSON.stringify({ render_id: id, output: result.outputPath, size_bytes: result.sizeBytes }, null, 2)}\n`
            : `Downloaded ${id} -> ${result.outputPath} (${formatBytes(result.sizeBytes)})\n`,
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
          io,
        );
      } finally {
        interrupt.dispose();
      }
    });
}
