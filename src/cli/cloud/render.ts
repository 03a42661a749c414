// `svc cloud render [dir]`: zip + upload a local project (or reuse --asset-id / --url), submit,
// wait and download — the flags, defaults and rules of the seed's flag table. `--dry-run` only
// builds and inspects the zip (no credential, no service); `--batch` renders one video per row of
// a table (batch.ts). runCloudRender calls core/pipeline and prints; the command parses flags.
import type { Command } from "commander";
import { formatBytes } from "../../shared/archive-report";
import { renderOnService, type ServiceRenderState } from "../../core/index";
import { dryRunProject, prepareProject } from "../../core/index";
import { newIdempotencyKey, type ProjectSource, type RenderSettings } from "../../core/index";
import type { AspectRatio, OutputFormat, Quality, Resolution } from "../../shared/render-options";
import { printJson, runAction } from "../command";
import { UsageError } from "../errors";
import {
  addAlsoFlag,
  addAspectRatioFlag,
  addCompositionFlag,
  addOutputOptionFlags,
  addVariablesFlags,
  addWaitFlags,
  parseStrictInteger,
  readAlsoOption,
  readVariablesOption,
} from "../options";
import type { CliIo } from "../io";
import { addCaptionsFlags, readCloudCaptionsOption, type CaptionsFlags } from "../captions";
import { printArchiveReport } from "./archive-report";
import { batchInterruptedHint, runCloudBatch, type CloudBatchState } from "./batch";
import { CLI_KEY_PREFIX, withCloudContext } from "./context";
import { checkCloudFlags, projectSourceFromFlags } from "./flags";
import { createCloudProgress } from "./progress";
import { runCloudQuote } from "./quote";

export interface CloudRenderOptions {
  project: ProjectSource;
  settings: RenderSettings;
  output?: string;
  dryRun?: boolean;
  /** Only quote: frames, credits and estimated time; nothing uploaded or charged. */
  quote?: boolean;
  wait: boolean;
  pollInterval: number;
  maxWait: number;
  idempotencyKey?: string;
  /** Ctrl+C (`signal`) cancels the render on the service instead of only stopping to wait. */
  cancelOnInterrupt?: boolean;
  json?: boolean;
  signal?: AbortSignal;
}

/** What `svc cloud render` prints with --json (and returns): the API's snake_case. */
export interface CloudRenderResult {
  render_id: string;
  asset_id: string | null;
  status: string | undefined;
  output?: string | undefined;
  size_bytes?: number | undefined;
  /** With --also: every file of the render, the main one first. */
  files?: { index: number; output: string; size_bytes: number }[] | undefined;
}

/**
 * The hint after Ctrl+C: what was left running and how to pick it up or stop it. Ctrl+C stops
 * waiting, not the render (a long render survives a closed terminal); --cancel-on-interrupt
 * cancels it on the service instead (`cancelled`).
 */
export function interruptedHint(
  state: (ServiceRenderState & { cancelled?: boolean }) | undefined,
  output?: string,
): string {
  if (state?.renderId && state.cancelled) {
    return `The render ${state.renderId} was cancelled on the service; nothing was charged.`;
  }
  if (state?.renderId) {
    return `The render keeps running on the service (and is charged when it completes); fetch it later with \`svc cloud download ${state.renderId}${output ? ` -o ${output}` : ""}\`, or stop it with \`svc cloud cancel ${state.renderId}\`.`;
  }
  if (state?.assetId) {
    return `Nothing was rendered; the upload is asset ${state.assetId} (render it with --asset-id ${state.assetId}).`;
  }
  return "Nothing was submitted; run the command again.";
}

/**
 * Renders (or, with dryRun, only inspects) the project and prints the outcome. `state` is filled
 * in as the render goes, for the hint after Ctrl+C. Returns undefined for a dry run.
 */
export async function runCloudRender(
  options: CloudRenderOptions,
  io: CliIo,
  state: { run?: ServiceRenderState & { cancelled?: boolean } } = {},
): Promise<CloudRenderResult | undefined> {
  const { project, settings } = options;
  const json = Boolean(options.json);
  if (options.quote) {
    await runCloudQuote(
      { project, settings, json, ...(options.signal ? { signal: options.signal } : {}) },
      io,
    );
    return undefined;
  }
  const progress = createCloudProgress({ quiet: json, stream: io.stderr });
  try {
    if (options.dryRun) {
      if (project.type !== "dir") {
        throw new UsageError(
          "--dry-run inspects a local project; it cannot be used with --asset-id or --url.",
        );
      }
      const report = await dryRunProject(
        { ...settings, dir: project.dir },
        (event) => event.type === "warning" && progress.onEvent(event),
      );
      if (json) printJson(io, { archive: report });
      else printArchiveReport(io, report);
      if (report.exceeds_upload_limit) io.exitCode = 1;
      return undefined;
    }
    // Everything that can fail locally fails before a service is started or contacted.
    if (project.type === "dir") await prepareProject({ ...settings, dir: project.dir });
    let embedded = false;
    const result = await withCloudContext(io, async (context) => {
      embedded = context.embedded;
      const run = renderOnService(
        {
          ...settings,
          client: context.client,
          project,
          wait: options.wait,
          output: options.output,
          pollIntervalMs: options.pollInterval * 1000,
          maxWaitMs: options.maxWait * 60_000,
          idempotencyKey: options.idempotencyKey ?? newIdempotencyKey(CLI_KEY_PREFIX),
        },
        {
          ...(options.signal ? { signal: options.signal } : {}),
          onEvent: (event) => {
            if (event.type === "state") state.run = event.state;
            progress.onEvent(event);
          },
        },
      );
      try {
        return await run;
      } catch (error) {
        const renderId = state.run?.renderId;
        if (options.cancelOnInterrupt && options.signal?.aborted && renderId) {
          // While the (possibly embedded) service is still there to hear it; a render that
          // ended meanwhile keeps the usual hint.
          await context.client.cancelRender(renderId).then(
            () => (state.run = { ...state.run!, cancelled: true }),
            () => undefined,
          );
        }
        throw error;
      }
    });
    progress.done();
    if (!options.wait) {
      const queued = {
        render_id: result.renderId,
        asset_id: result.assetId ?? null,
        status: "queued",
      };
      if (json) {
        printJson(io, queued);
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
      return queued;
    }
    const files =
      result.files && result.files.length > 1
        ? result.files.map((file) => ({
            index: file.index,
            output: file.path,
            size_bytes: file.sizeBytes,
          }))
        : undefined;
    const done = {
      render_id: result.renderId,
      asset_id: result.assetId ?? null,
      status: result.record?.status,
      output: result.outputPath,
      size_bytes: result.sizeBytes,
      ...(files ? { files } : {}),
    };
    if (json) {
      printJson(io, { ...done, render: result.record });
    } else {
      io.stdout.write(
        `Rendered ${result.renderId} -> ${result.outputPath} (${formatBytes(result.sizeBytes ?? 0)}, ${result.record?.credits_charged ?? 0} credits)\n`,
      );
      for (const file of files?.slice(1) ?? []) {
        io.stdout.write(`  also -> ${file.output} (${formatBytes(file.size_bytes)})\n`);
      }
      if (result.assetId)
        io.stderr.write(`Asset ${result.assetId} can be rendered again with --asset-id.\n`);
    }
    return done;
  } finally {
    progress.done();
  }
}

interface CloudRenderFlags extends CaptionsFlags {
  fps: number;
  quality: Quality;
  format: OutputFormat;
  resolution: Resolution;
  aspectRatio?: AspectRatio;
  composition: string;
  output?: string;
  dryRun?: boolean;
  quote?: boolean;
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
  cancelOnInterrupt?: boolean;
  json?: boolean;
  batch?: string;
  outputPattern?: string;
  concurrency?: number;
  also?: string;
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
    also: readAlsoOption(flags.also, flags),
    captions: readCloudCaptionsOption(flags, project.type === "dir" ? project.dir : undefined),
  };
  checkCloudFlags(settings, flags.idempotencyKey);
  return { project, settings };
}

function runFromFlags(io: CliIo, dir: string | undefined, flags: CloudRenderFlags): Promise<void> {
  if (flags.batch !== undefined) {
    const batch = flags.batch;
    const state: CloudBatchState = {
      key: flags.idempotencyKey ?? newIdempotencyKey(CLI_KEY_PREFIX),
    };
    let started = false;
    return runAction(
      io,
      flags.json,
      (signal) => {
        if (flags.also !== undefined) {
          throw new UsageError(
            "--also cannot be used with --batch: each row renders one video.",
            "Render the extra sizes of one row with --also and without --batch.",
          );
        }
        const { project, settings } = projectAndSettings(dir, flags);
        started = true;
        return runCloudBatch(
          { ...flags, project, settings, batch, concurrency: flags.concurrency ?? 2, signal },
          io,
          state,
        );
      },
      () =>
        started ? batchInterruptedHint(state) : "Nothing was submitted; run the command again.",
    );
  }
  const state: { run?: ServiceRenderState & { cancelled?: boolean } } = {};
  return runAction(
    io,
    flags.json,
    (signal) => {
      const { project, settings } = projectAndSettings(dir, flags);
      for (const [given, flag] of [
        [flags.outputPattern, "--output-pattern"],
        [flags.concurrency, "--concurrency"],
      ] as const) {
        if (given !== undefined)
          throw new UsageError(`${flag} only applies with --batch.`, "Example: --batch rows.csv");
      }
      return runCloudRender({ ...flags, project, settings, signal }, io, state);
    },
    () => interruptedHint(state.run, flags.output),
  );
}

export function registerCloudRenderCommand(cloud: Command, io: CliIo): void {
  const command = cloud
    .command("render")
    .description("render a composition on the render service and download the video")
    .argument("[dir]", "project folder to zip and upload (default: .)");
  addOutputOptionFlags(command, " (4k is billed x1.5)");
  addWaitFlags(command);
  addAspectRatioFlag(
    command,
    "detected from data-width/data-height; for --asset-id/--url the service detects it, else 16:9",
  );
  addAlsoFlag(command);
  addCaptionsFlags(command, true);
  addCompositionFlag(command)
    .option("-o, --output <file>", "where to save the video (default: renders/<render_id>.<ext>)")
    .option("--dry-run", "build and inspect the zip only: no sign-in, upload or render")
    .option(
      "--quote",
      "frames, credits and estimated time (sampled here, queue from the service); nothing uploaded or charged",
    );
  addVariablesFlags(command)
    .option("--asset-id <id>", "render an uploaded asset (skips zip and upload)")
    .option("--url <url>", "render a project zip or HTML file from a URL (skips zip and upload)")
    .option("--no-wait", "submit, print the render id and exit")
    .option("--callback-url <url>", "HTTPS webhook called when the render ends")
    .option("--callback-id <id>", "tracking id echoed in the webhook")
    .option("--idempotency-key <key>", "makes retries safe (A-Z a-z 0-9 _ : . -, 1-255 chars)")
    .option(
      "--cancel-on-interrupt",
      "Ctrl+C cancels the render on the service (default: it stops waiting and the render goes on)",
    )
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
    .action((dir: string | undefined, flags: CloudRenderFlags) => runFromFlags(io, dir, flags));
}
