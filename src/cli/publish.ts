// `svc publish [dir]`: zip and upload a project and print its asset id, for the template
// workflow (`svc cloud render --asset-id ID --variables ...` as often as needed, no re-upload).
// `--dry-run` shows what would be uploaded, exactly like `svc cloud render --dry-run`.
import type { Command } from "commander";
import { formatBytes, type ArchiveReport } from "../shared/archive-report";
import { dryRunProject, publishProject } from "../core/index";
import { newIdempotencyKey } from "../core/index";
import { printJson, runAction } from "./command";
import { reportParseErrorsAsJson } from "./errors";
import { addCompositionFlag } from "./options";
import type { CliIo } from "./io";
import { printArchiveReport } from "./cloud/archive-report";
import { CLI_KEY_PREFIX, withCloudContext } from "./cloud/context";
import { checkIdempotencyKeyFlag } from "./cloud/flags";
import { createCloudProgress } from "./cloud/progress";

export interface PublishOptions {
  dir: string;
  composition: string;
  dryRun?: boolean;
  idempotencyKey?: string;
  json?: boolean;
  signal?: AbortSignal;
}

export type PublishResult =
  { asset_id: string; archive: ArchiveReport } | { asset_id?: undefined; archive: ArchiveReport };

export async function runPublish(options: PublishOptions, io: CliIo): Promise<PublishResult> {
  const json = Boolean(options.json);
  const { dir, composition } = options;
  const progress = createCloudProgress({ quiet: json, stream: io.stderr });
  try {
    const idempotencyKey =
      options.idempotencyKey !== undefined
        ? checkIdempotencyKeyFlag(options.idempotencyKey)
        : newIdempotencyKey(CLI_KEY_PREFIX);
    if (options.dryRun) {
      const report = await dryRunProject({ dir, composition });
      if (json) printJson(io, { archive: report });
      else printArchiveReport(io, report);
      if (report.exceeds_upload_limit) io.exitCode = 1;
      return { archive: report };
    }
    const result = await withCloudContext(io, ({ client }) =>
      publishProject(
        client,
        { dir, composition, idempotencyKey },
        {
          ...(options.signal ? { signal: options.signal } : {}),
          onEvent: (event) => progress.onEvent(event),
        },
      ),
    );
    progress.done();
    if (json) {
      printJson(io, { asset_id: result.assetId, archive: result.report });
    } else {
      io.stdout.write(`${result.assetId}\n`);
      io.stderr.write(
        `Published ${result.report.file_count} files (${formatBytes(result.report.size_bytes)}). Render it with \`svc cloud render --asset-id ${result.assetId}\`.\n`,
      );
    }
    return { asset_id: result.assetId, archive: result.report };
  } finally {
    progress.done();
  }
}

export function registerPublishCommand(program: Command, io: CliIo): void {
  const command = reportParseErrorsAsJson(program.command("publish"), io)
    .description("zip and upload a project; prints the asset id to render with --asset-id")
    .argument("[dir]", "project folder", ".");
  addCompositionFlag(command)
    .option("--dry-run", "build and inspect the zip only: no sign-in or upload")
    .option("--idempotency-key <key>", "makes retries safe (A-Z a-z 0-9 _ : . -, 1-255 chars)")
    .option("--json", "print the result as JSON on stdout")
    .action((dir: string, flags: Omit<PublishOptions, "dir" | "signal">) =>
      runAction(
        io,
        flags.json,
        (signal) => runPublish({ ...flags, dir, signal }, io),
        () => "Nothing was published; run the command again.",
      ),
    );
}
