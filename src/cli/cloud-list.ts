// `svc cloud list [--limit N] [--token T] [--all]`: recent renders, newest first, one page (or
// every page with --all).
import type { Command } from "commander";
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, type RenderRecord } from "../shared/api";
import { interruptSignal, withCloudContext } from "./cloud-context";
import { reportError } from "./errors";
import { parseStrictInteger } from "./options";
import type { CliIo } from "./io";

interface ListFlags {
  limit: number;
  token?: string;
  all?: boolean;
  json?: boolean;
}

function formatRow(record: RenderRecord): string {
  const when = new Date(record.created_at * 1000).toISOString().replace("T", " ").slice(0, 19);
  return `${record.render_id}  ${record.status.padEnd(9)}  ${record.format.padEnd(4)}  ${when}${record.title ? `  ${record.title}` : ""}`;
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
    .action(async (flags: ListFlags) => {
      const interrupt = interruptSignal();
      try {
        const page = await withCloudContext(io, async (context) => {
          let token = flags.token;
          const data: RenderRecord[] = [];
          for (;;) {
            const result = await context.client.listRenders(
              { limit: flags.limit, ...(token ? { token } : {}) },
              interrupt.signal,
            );
            data.push(...result.data);
            if (!flags.all || !result.has_more || !result.next_token) {
              return { data, has_more: result.has_more, next_token: result.next_token };
            }
            token = result.next_token;
          }
        });
        if (flags.json) {
          io.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
          return;
        }
        if (page.data.length === 0) io.stdout.write("No renders yet.\n");
        for (const record of page.data) io.stdout.write(`${formatRow(record)}\n`);
        if (page.has_more && page.next_token) {
          io.stderr.write(`More: svc cloud list --token ${page.next_token} (or --all)\n`);
        }
      } catch (error) {
        reportError(error, Boolean(flags.json), io);
      } finally {
        interrupt.dispose();
      }
    });
}
