// `svc cloud render [dir]`: zip + upload a local project (or reuse --asset-id / --url), submit,
// wait and download — the flags, defaults and rules of the seed's flag table. `--dry-run` only
// builds and inspects the zip (no credential, no service). Thin: parse flags, call
// core/pipeline, print.
import { Option, type Command } from "commander";
import { formatBytes } from "../shared/archive-report";
import { printArchiveReport } from "./archive-report";
import { runRender, type RenderRunState } from "../core/pipeline";
import { dryRunProject, prepareProject } from "../core/publish";
import { newIdempotencyKey, type ProjectSource, type RenderSettings } from "../core/render-job";
import { checkCloudFlags, projectSourceFromFlags } from "./cloud-flags";
import {
  ASPECT_RATIOS,
  type AspectRatio,
  type OutputFormat,
  type Quality,
  type Resolution,
} from "../shared/render-options";
import { createCloudProgress } from "./cloud-progress";
import { CLI_KEY_PREFIX, interruptSignal, withCloudContext } from "./cloud-context";
import { reportError, UsageError } from "./errors";
import {
  addOutputOptionFlags,
  addWaitFlags,
  parseStrictInteger,
  readVariablesOption,
  withInterruptHint,
} from "./options";
import { runCloudBatch } from "./cloud-batch";
import type { CliIo } from "./io";

interface CloudRenderFlags {
  fps: number;
  quality: Quality;
  format: OutputFormat;
  resolution: Resolution;
  aspectRatio?: AspectRatio;
  composition: string;
  output?: string;
  dryRun?: boolean;
  variables?: string;
  variablesFile?: string;
  strictVariables?: boolean;
  assetId?: string;
  url?: string;
  wait: boolean;
  callbackUrl?: string;
  callbackId?: string;
  pollInterval: number;
  maxWait: number;
  idempotencyKey?: string;
  json?: boolean;
  batch?: string;
  outputPattern?: string;
  concurrency?: number;
}

/** The hint after Ctrl+C: what was left running and how to pick it up. */
export function interruptedHint(state: RenderRunState | undefined, output?: string): string {
  if (state?.renderId) {
    return `The render keeps running on the service; fetch it later with \`svc cloud download ${state.renderId}${output ? ` -o ${output}` : ""}\`.`;
  }
  if (state?.assetId) {
    return `Nothing was rendered; the upload is asset ${state.assetId} (render it with --asset-id ${state.assetId}).`;
  }
  return "Nothing was submitted; run the command again.";
}

export function registerCloudRenderCommand(cloud: Command, io: CliIo): void {
  addWaitFlags(
    addOutputOptionFlags(
      cloud
        .command("render")
        .description("render a composition on the render service and download the video")
        .argument("[dir]", "project folder to zip and upload (default: .)"),
      " (4k is billed x1.5)",
    ),
  )
    .addOption(
      new Option(
        "--aspect-ratio <ratio>",
        "aspect ratio (default: detected from data-width/data-height; for --asset-id/--url the service detects it, else 16:9)",
      ).choices(ASPECT_RATIOS),
    )
    .option("-c, --composition <path>", "entry HTML file inside the project", "index.html")
    .option("-o, --output <file>", "where to save the video (default: renders/<render_id>.<ext>)")
    .option("--dry-run", "build and inspect the zip only: no sign-in, upload or render")
    .option("--variables <json>", "variable values as a JSON object")
    .option("--variables-file <file>", "variable values from a JSON file")
    .option("--strict-variables", "fail on undeclared variables or wrong types")
    .option("--asset-id <id>", "render an uploaded asset (skips zip and upload)")
    .option("--url <url>", "render a project zip or HTML file from a URL (skips zip and upload)")
    .option("--no-wait", "submit, print the render id and exit")
    .option("--callback-url <url>", "HTTPS webhook called when the render ends")
    .option("--callback-id <id>", "tracking id echoed in the webhook")
    .option("--idempotency-key <key>", "makes retries safe (A-Z a-z 0-9 _ : . -, 1-255 chars)")
    .option("--json", "print the result as JSON on stdout")
    .option(
      "--batch <file>",
      "render one video per row of a CSV or JSON table whose columns are variable ids (one upload)",
    )
    .option(
      "--output-pattern <pattern>",
      "with --batch: file name of each row's video, e.g. {title}-{row} (default: first text column, then {row})",
    )
    .option(
      "--concurrency <n>",
      "with --batch: rows rendered at once (1-16, default 2)",
      parseStrictInteger("--concurrency", 1, 16),
    )
    .action(async (dir: string | undefined, flags: CloudRenderFlags) => {
      if (flags.batch !== undefined) return renderBatch(io, dir, { ...flags, batch: flags.batch });
      const json = Boolean(flags.json);
      const interrupt = interruptSignal();
      const progress = createCloudProgress({ quiet: json, stream: io.stderr });
      let state: RenderRunState | undefined;
      try {
        const { project, settings } = projectAndSettings(dir, flags);
        for (const [given, flag] of [
          [flags.outputPattern, "--output-pattern"],
          [flags.concurrency, "--concurrency"],
        ] as const) {
          if (given !== undefined)
            throw new UsageError(`${flag} only applies with --batch.`, "Example: --batch rows.csv");
        }
        if (flags.dryRun) {
          if (project.type !== "dir") {
            throw new UsageError(
              "--dry-run inspects a local project; it cannot be used with --asset-id or --url.",
            );
          }
          const report = await dryRunProject(
            { ...settings, dir: project.dir },
            (event) => event.type === "warning" && progress.onEvent(event),
          );
          if (json) io.stdout.write(`${JSON.stringify({ archive: report }, null, 2)}\n`);
          else printArchiveReport(io, report);
          if (report.exceeds_upload_limit) io.exitCode = 1;
          return;
        }
        // Everything that can fail locally fails before a service is started or contacted.
        if (project.type === "dir") await prepareProject({ ...settings, dir: project.dir });
        let embedded = false;
        const result = await withCloudContext(io, (context) => {
          embedded = context.embedded;
          return runRender(
            {
              ...settings,
              client: context.client,
              project,
              wait: flags.wait,
              output: flags.output,
              pollIntervalMs: flags.pollInterval * 1000,
              maxWaitMs: flags.maxWait * 60_000,
              idempotencyKey: flags.idempotencyKey ?? newIdempotencyKey(CLI_KEY_PREFIX),
            },
            {
              signal: interrupt.signal,
              onEvent: (event) => {
                if (event.type === "state") state = event.state;
                progress.onEvent(event);
              },
            },
          );
        });
        progress.done();
        if (!flags.wait) {
          if (json) {
            io.stdout.write(
              `${JSON.stringify({ render_id: result.renderId, asset_id: result.assetId ?? null, status: "queued" }, null, 2)}\n`,
            );
          } else {
            io.stdout.write(`${result.renderId}\n`);
            io.stderr.write(
              `Submitted; fetch the video with \`svc cloud download ${result.renderId}\`.\n`,
            );
            if (embedded) {
              io.stderr.write(
                "note: the local service stopped with this command; the render continues when it runs again (`svc server`, or any `svc cloud` command).\n",
              );
            }
          }
          return;
        }
        if (json) {
          io.stdout.write(
            `${JSON.stringify(
              {
                render_id: result.renderId,
                asset_id: result.assetId ?? null,
                status: result.record?.status,
                output: result.outputPath,
                size_bytes: result.sizeBytes,
                render: result.record,
              },
              null,
              2,
            )}\n`,
          );
        } else {
          io.stdout.write(
            `Rendered ${result.renderId} -> ${result.outputPath} (${formatBytes(result.sizeBytes ?? 0)}, ${result.record?.credits_charged ?? 0} credits)\n`,
          );
          if (result.assetId)
            io.stderr.write(`Asset ${result.assetId} can be rendered again with --asset-id.\n`);
        }
      } catch (error) {
        progress.done();
        reportError(withInterruptHint(error, interruptedHint(state, flags.output)), json, io);
      } finally {
        interrupt.dispose();
      }
    });
}

/** `--batch`: the same flags, one render per row of the table (src/cli/cloud-batch.ts). */
async function renderBatch(
  io: CliIo,
  dir: string | undefined,
  flags: CloudRenderFlags & { batch: string },
): Promise<void> {
  let project: ProjectSource;
  let settings: RenderSettings;
  try {
    ({ project, settings } = projectAndSettings(dir, flags));
  } catch (error) {
    reportError(error, Boolean(flags.json), io);
    return;
  }
  await runCloudBatch(io, project, settings, {
    ...flags,
    concurrency: flags.concurrency ?? 2,
  });
}

/** The project and render settings the flags ask for, checked (refusals name the flag). */
function projectAndSettings(
  dir: string | undefined,
  flags: CloudRenderFlags,
): { project: ProjectSource; settings: RenderSettings } {
  const project = projectSourceFromFlags({ dir, assetId: flags.assetId, url: flags.url });
  const settings = {
    fps: flags.fps,
    quality: flags.quality,
    format: flags.format,
    resolution: flags.resolution,
    aspectRatio: flags.aspectRatio,
    composition: flags.composition,
    variables: readVariablesOption(flags),
    strictVariables: flags.strictVariables,
    callbackUrl: flags.callbackUrl,
    callbackId: flags.callbackId,
  };
  checkCloudFlags(settings, flags.idempotencyKey);
  return { project, settings };
}
