// `svc cloud download ID [-o FILE]`: re-attach to a render — wait for it if it is still running,
// then download the video (temp file + rename; a fresh signed URL each time).
import type { Command } from "commander";
import { formatBytes } from "../shared/archive-report";
import { defaultOutputPath } from "../core/download";
import { finishRender } from "../core/pipeline";
import { createCloudProgress } from "./cloud-progress";
import { interruptSignal, withCloudContext } from "./cloud-context";
import { reportError } from "./errors";
import { addWaitFlags, withInterruptHint } from "./options";
import type { CliIo } from "./io";

interface DownloadFlags {
  output?: string;
  pollInterval: number;
  maxWait: number;
  json?: boolean;
}

export function registerCloudDownloadCommand(cloud: Command, io: CliIo): void {
  addWaitFlags(cloud.command("download"))
    .description("download a render's video, waiting for it first if it is still running")
    .argument("<id>", "render id (rndr_...)")
    .option("-o, --output <file>", "where to save the video (default: renders/<render_id>.<ext>)")
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
        reportError(
          withInterruptHint(error, `Run \`svc cloud download ${id}\` again to finish.`),
          json,
          io,
        );
      } finally {
        interrupt.dispose();
      }
    });
}
