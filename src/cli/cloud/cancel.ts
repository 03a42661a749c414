// `svc cloud cancel ID`: stops a queued or rendering render on the service. It ends failed with
// failure_code `cancelled` and nothing is charged; cancelling it again answers the same, and a
// render that already ended is refused (exit 1, the service's 409 `svc_render_finished`).
import type { Command } from "commander";
import type { RenderRecord } from "../../shared/api";
import { printJson, runAction } from "../command";
import type { CliIo } from "../io";
import { withCloudContext } from "./context";

export interface CloudCancelOptions {
  renderId: string;
  json?: boolean;
  signal?: AbortSignal;
}

export async function runCloudCancel(
  options: CloudCancelOptions,
  io: CliIo,
): Promise<RenderRecord> {
  const record = await withCloudContext(io, (context) =>
    context.client.cancelRender(options.renderId, options.signal),
  );
  if (options.json) printJson(io, record);
  else io.stdout.write(`Cancelled ${options.renderId}; nothing was charged.\n`);
  return record;
}

export function registerCloudCancelCommand(cloud: Command, io: CliIo): void {
  cloud
    .command("cancel")
    .description("stop a queued or rendering render (nothing is charged)")
    .argument("<id>", "render id (rndr_...)")
    .option("--json", "print the cancelled render record as JSON")
    .action((renderId: string, flags: { json?: boolean }) =>
      runAction(io, flags.json, (signal) => runCloudCancel({ renderId, ...flags, signal }, io)),
    );
}
