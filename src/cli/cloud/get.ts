// `svc cloud get ID`: one render's record (status, progress, fresh signed URLs).
import type { Command } from "commander";
import type { RenderRecord } from "../../shared/api";
import { printJson, runAction } from "../command";
import type { CliIo } from "../io";
import { withCloudContext } from "./context";

export interface CloudGetOptions {
  renderId: string;
  json?: boolean;
  signal?: AbortSignal;
}

export function formatRenderRecord(record: RenderRecord): string {
  const lines = [
    `${record.render_id}  ${record.status}${record.status === "rendering" ? ` ${Math.round(record.progress * 100)}%` : ""}`,
    `  ${record.format} ${record.resolution} ${record.aspect_ratio} ${record.fps} fps ${record.quality}${record.duration !== null ? `, ${record.duration} s` : ""}, ${record.credits_charged} credits`,
    `  created ${new Date(record.created_at * 1000).toISOString()}${record.completed_at ? `, completed ${new Date(record.completed_at * 1000).toISOString()}` : ""}`,
  ];
  if (record.title) lines.push(`  title ${record.title}`);
  if (record.failure_code || record.failure_message) {
    lines.push(`  failed: ${record.failure_message ?? ""} (${record.failure_code ?? "unknown"})`);
  }
  if (record.video_url) lines.push(`  video ${record.video_url}`);
  return lines.join("\n");
}

export async function runCloudGet(options: CloudGetOptions, io: CliIo): Promise<RenderRecord> {
  const record = await withCloudContext(io, (context) =>
    context.client.getRender(options.renderId, options.signal),
  );
  if (options.json) printJson(io, record);
  else io.stdout.write(`${formatRenderRecord(record)}\n`);
  return record;
}

export function registerCloudGetCommand(cloud: Command, io: CliIo): void {
  cloud
    .command("get")
    .description("show one render")
    .argument("<id>", "render id (rndr_...)")
    .option("--json", "print the render record as JSON")
    .action((renderId: string, flags: { json?: boolean }) =>
      runAction(io, flags.json, (signal) => runCloudGet({ renderId, ...flags, signal }, io)),
    );
}
