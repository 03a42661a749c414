// `svc cloud delete ID`: soft-delete a render (its files are purged). Asks on a terminal;
// elsewhere `--yes` is required, and a declined confirmation exits 2.
import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import { interruptSignal, withCloudContext } from "./cloud-context";
import { reportError, UsageError } from "./errors";
import type { CliIo } from "./io";

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

export function registerCloudDeleteCommand(cloud: Command, io: CliIo): void {
  cloud
    .command("delete")
    .description("delete a render and its video")
    .argument("<id>", "render id (rndr_...)")
    .option("-y, --yes", "do not ask for confirmation")
    .option("--json", "print {render_id, deleted} as JSON")
    .action(async (id: string, flags: { yes?: boolean; json?: boolean }) => {
      const interrupt = interruptSignal();
      try {
        if (!flags.yes) {
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
        await withCloudContext(io, (context) => context.client.deleteRender(id, interrupt.signal));
        io.stdout.write(
          flags.json
            ? `${JSON.stringify({ render_id: id, deleted: true }, null, 2)}\n`
            : `Deleted ${id}\n`,
        );
      } catch (error) {
        reportError(error, Boolean(flags.json), io);
      } finally {
        interrupt.dispose();
      }
    });
}
