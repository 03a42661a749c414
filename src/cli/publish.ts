// `svc publish [dir]`: zip and upload a project and print its asset id, for the template
// workflow (`svc cloud render --asset-id ID --variables ...` as often as needed, no re-upload).
// `--dry-run` shows what would be uploaded, exactly like `svc cloud render --dry-run`.
import type { Command } from "commander";
import { formatBytes } from "../shared/archive-report";
import { dryRunProject, publishProject } from "../core/publish";
import { newIdempotencyKey } from "../core/render-job";
import { checkIdempotencyKeyFlag } from "./cloud-flags";
import { printArchiveReport } from "./archive-report";
import { createCloudProgress } from "./cloud-progress";
import { CLI_KEY_PREFIX, interruptSignal, withCloudContext } from "./cloud-context";
import { reportError, reportParseErrorsAsJson } from "./errors";
import { withInterruptHint } from "./options";
import type { CliIo } from "./io";

interface PublishFlags {
  composition: string;
  dryRun?: boolean;
  idempotencyKey?: string;
  json?: boolean;
}

export function registerPublishCommand(program: Command, io: CliIo): void {
  reportParseErrorsAsJson(program.command("publish"), io)
    .description("zip and upload a project; prints the asset id to render with --asset-id")
    .argument("[dir]", "project folder", ".")
    .option("-c, --composition <path>", "entry HTML file inside the project", "index.html")
    .option("--dry-run", "build and inspect the zip only: no sign-in or upload")
    .option("--idempotency-key <key>", "makes retries safe (A-Z a-z 0-9 _ : . -, 1-255 chars)")
    .option("--json", "print the result as JSON on stdout")
    .action(async (dir: string, flags: PublishFlags) => {
      const json = Boolean(flags.json);
      const interrupt = interruptSignal();
      const progress = createCloudProgress({ quiet: json, stream: io.stderr });
      try {
        const idempotencyKey =
          flags.idempotencyKey !== undefined
            ? checkIdempotencyKeyFlag(flags.idempotencyKey)
            : newIdempotencyKey(CLI_KEY_PREFIX);
        if (flags.dryRun) {
          const report = await dryRunProject({ dir, composition: flags.composition });
          if (json) io.stdout.write(`${JSON.stringify({ archive: report }, null, 2)}\n`);
          else printArchiveReport(io, report);
          if (report.exceeds_upload_limit) io.exitCode = 1;
          return;
        }
        const result = await withCloudContext(io, ({ client }) =>
          publishProject(
            client,
            { dir, composition: flags.composition, idempotencyKey },
            { signal: interrupt.signal, onEvent: (event) => progress.onEvent(event) },
          ),
        );
        progress.done();
        if (json) {
          io.stdout.write(
            `${JSON.stringify({ asset_id: result.assetId, archive: result.report }, null, 2)}\n`,
          );
        } else {
          io.stdout.write(`${result.assetId}\n`);
          io.stderr.write(
            `Published ${result.report.file_count} files (${formatBytes(result.report.size_bytes)}). Render it with \`svc cloud render --asset-id ${result.assetId}\`.\n`,
          );
        }
      } catch (error) {
        progress.done();
        reportError(
          withInterruptHint(error, "Nothing was published; run the command again."),
          json,
          io,
        );
      } finally {
        interrupt.dispose();
      }
    });
}
