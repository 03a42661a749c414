// `svc cloud delete ID`: soft-delete a render (its files are purged). Asks on a terminal;
// elsewhere `--yes` is required, and a declined confirmation exits 2.
import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import { interruptSignal, withCloudContext } from "./cloud-context";
import { reportError, UsageError } from "./errors";

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

export function registerCloudDeleteCommand(cloud: Command): void {
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
          if (!process.stdin.isTTY || !process.stderr.isTTY) {
            throw new UsageError(
              `Refusing to delete ${id} without confirmation.`,
              "Pass --yes to delete without a prompt.",
            );
          }
          if (!(await confirm(`Delete render ${id} and its video? [y/N] `))) {
            throw new UsageError("Not deleted.");
          }
        }
        await withCloudContext((context) => context.client.deleteRender(id, interrupt.signal));
        process.stdout.write(
          flags.json
            ? `${JSON.stringify({ render_id: id, deleted: true }, null, 2)}\n`
            : `Deleted ${id}\n`,
        );
      } catch (error) {
        reportError(error, Boolean(flags.json));
      } finally {
        interrupt.dispose();
      }
    });
}
