// `svc cloud list [--limit N] [--token T] [--all]`: recent renders, newest first, one page (or
// every page with --all).
import type { Command } from "commander";
import {
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  type RenderList,
  type RenderRecord,
} from "../../shared/api";
import { printJson, runAction } from "../command";
import { parseStrictInteger } from "../options";
import type { CliIo } from "../io";
import { withCloudContext } from "./context";

export interface CloudListOptions {
  limit: number;
  token?: string;
  all?: boolean;
  json?: boolean;
  signal?: AbortSignal;
}

function formatRow(record: RenderRecord): string {
  const when = new Date(record.created_at * 1000).toISOString().replace("T", " ").slice(0, 19);
  return `${record.render_id}  ${record.status.padEnd(9)}  ${record.format.padEnd(4)}  ${when}${record.title ? `  ${record.title}` : ""}`;
}

export async function runCloudList(options: CloudListOptions, io: CliIo): Promise<RenderList> {
  const page = await withCloudContext(io, async (context) => {
    let token = options.token;
    const data: RenderRecord[] = [];
    for (;;) {
      const result = await context.client.listRenders(
        { limit: options.limit, ...(token ? { token } : {}) },
        options.signal,
      );
      data.push(...result.data);
      if (!options.all || !result.has_more || !result.next_token) {
        return { data, has_more: result.has_more, next_token: result.next_token };
      }
      token = result.next_token;
    }
  });
  if (options.json) {
    printJson(io, page);
    return page;
  }
  if (page.data.length === 0) io.stdout.write("No renders yet.\n");
  for (const record of page.data) io.stdout.write(`${formatRow(record)}\n`);
  if (page.has_more && page.next_token) {
    io.stderr.write(`More: svc cloud list --token ${page.next_token} (or --all)\n`);
  }
  return page;
}

export function registerCloudListCommand(cloud: Command, io: CliIo): void {
  cloud
    .command("list")
    .description("list recent renders, newest first")
    .option(
      "--limit <n>",
      `renders per page (1-${LIST_LIMIT_MAX})`,
      parseStrictInteger("--limit", 1, LIST_LIMIT_MAX),
      LIST_LIMIT_DEFAULT,
    )
    .option("--token <token>", "page token from a previous list (next_token)")
    .option("--all", "follow every page")
    .option("--json", "print {data, has_more, next_token} as JSON")
    .action((flags: CloudListOptions) =>
      runAction(io, flags.json, (signal) => runCloudList({ ...flags, signal }, io)),
    );
}
