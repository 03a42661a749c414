// `svc cloud download ID [-o FILE]`: re-attach to a render — wait for it if it is still running,
// then download the video (temp file + rename; a fresh signed URL each time).
import type { Command } from "commander";
import { formatBytes } from "../../shared/archive-report";
import { defaultOutputPath } from "../../core/index";
import { finishRender } from "../../core/index";
import { printJson, runAction } from "../command";
import { addWaitFlags } from "../options";
import type { CliIo } from "../io";
import { withCloudContext } from "./context";
import { createCloudProgress } from "./progress";

export interface CloudDownloadOptions {
  renderId: string;
  output?: string;
  pollInterval: number;
  maxWait: number;
  json?: boolean;
  signal?: AbortSignal;
}

export interface CloudDownloadResult {
  render_id: string;
  output: string;
  size_bytes: number;
}

export async function runCloudDownload(
  options: CloudDownloadOptions,
  io: CliIo,
): Promise<CloudDownloadResult> {
  const id = options.renderId;
  const progress = createCloudProgress({ quiet: Boolean(options.json), stream: io.stderr });
  let finished: Awaited<ReturnType<typeof finishRender>>;
  try {
    finished = await withCloudContext(io, ({ client }) =>
      finishRender(client, id, {
        pollIntervalMs: options.pollInterval * 1000,
        maxWaitMs: options.maxWait * 60_000,
        ...(options.signal ? { signal: options.signal } : {}),
        outputPath: (record) => options.output ?? defaultOutputPath(record),
        onEvent: (event) => progress.onEvent(event),
        allOutputs: true,
      }),
    );
  } finally {
    progress.done();
  }
  const result = {
    render_id: id,
    output: finished.outputPath,
    size_bytes: finished.sizeBytes,
    ...(finished.files.length > 1
      ? {
          files: finished.files.map((file) => ({
            index: file.index,
            output: file.path,
            size_bytes: file.sizeBytes,
          })),
        }
      : {}),
  };
  if (options.json) printJson(io, result);
  else {
    io.stdout.write(`Downloaded ${id} -> ${result.output} (${formatBytes(result.size_bytes)})\n`);
    for (const file of result.files?.slice(1) ?? []) {
      io.stdout.write(`  also -> ${file.output} (${formatBytes(file.size_bytes)})\n`);
    }
  }
  return result;
}

export function registerCloudDownloadCommand(cloud: Command, io: CliIo): void {
  addWaitFlags(cloud.command("download"))
    .description(
      "download a render's video (and its other outputs, next to it), waiting for it first if it is still running",
    )
    .argument("<id>", "render id (rndr_...)")
    .option("-o, --output <file>", "where to save the video (default: renders/<render_id>.<ext>)")
    .option("--json", "print {render_id, output, size_bytes} as JSON")
    .action((renderId: string, flags: Omit<CloudDownloadOptions, "renderId">) =>
      runAction(
        io,
        flags.json,
        (signal) => runCloudDownload({ renderId, ...flags, signal }, io),
        () => `Run \`svc cloud download ${renderId}\` again to finish.`,
      ),
    );
}
