// `svc cloud delete ID`: soft-delete a render (its files are purged). Asks on a terminal;
// elsewhere `--yes` is required, and a declined confirmation exits 2.
import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import { printJson, runAction } from "../command";
import { UsageError } from "../errors";
import type { CliIo } from "../io";
import { withCloudContext } from "./context";

export interface CloudDeleteOptions {
  renderId: string;
  yes?: boolean;
  json?: boolean;
  signal?: AbortSignal;
}

async function confirm(io: CliIo, question: string): Promise<boolean> {
  const rl = createInterface({
    input: io.stdin as unknown as NodeJS.ReadableStream,
    output: io.stderr as unknown as NodeJS.WritableStream,
  });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

export async function runCloudDelete(
  options: CloudDeleteOptions,
  io: CliIo,
): Promise<{ render_id: string; deleted: true }> {
  const id = options.renderId;
  if (!options.yes) {
    if (!io.stdin.isTTY || !io.stderr.isTTY) {
      throw new UsageError(
        `Refusing to delete ${id} without confirmation.`,
        "Pass --yes to delete without a prompt.",
      );
    }
    if (!(await confirm(io, `Delete render ${id} and its video? [y/N] `))) {
      throw new UsageError("Not deleted.");
    }
  }
  await withCloudContext(io, (context) => context.client.deleteRender(id, options.signal));
  const result = { render_id: id, deleted: true } as const;
  if (options.json) printJson(io, result);
  else io.stdout.write(`Deleted ${id}\n`);
  return result;
}

export function registerCloudDeleteCommand(cloud: Command, io: CliIo): void {
  cloud
    .command("delete")
    .description("delete a render and its video")
    .argument("<id>", "render id (rndr_...)")
    .option("-y, --yes", "do not ask for confirmation")
    .option("--json", "print {render_id, deleted} as JSON")
    .action((renderId: string, flags: { yes?: boolean; json?: boolean }) =>
      runAction(io, flags.json, (signal) => runCloudDelete({ renderId, ...flags, signal }, io)),
    );
}
