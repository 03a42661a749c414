// `svc cloud`: render on the render service and manage renders. Each verb lives in its own file.
// `registerCloudCommands` also adds the commands that go with it: `svc publish` and `svc auth`.
import type { Command } from "commander";
import { registerAuthCommand } from "./auth";
import { registerCloudDeleteCommand } from "./cloud-delete";
import { registerCloudDownloadCommand } from "./cloud-download";
import { registerCloudGetCommand } from "./cloud-get";
import { registerCloudListCommand } from "./cloud-list";
import { registerCloudRenderCommand } from "./cloud-render";
import { registerPublishCommand } from "./publish";

/**
 * With --json, flag errors that commander itself reports (an unknown choice, a missing argument)
 * come out as `{error: {...}}` on stdout like every other error. Subcommands created afterwards
 * inherit this output configuration.
 */
export function reportParseErrorsAsJson(command: Command): Command {
  return command.configureOutput({
    outputError: (text, write) => {
      if (!process.argv.includes("--json")) return write(text);
      const message = text.replace(/^error:\s*/, "").trim();
      process.stdout.write(
        `${JSON.stringify({ error: { code: "usage_error", message } }, null, 2)}\n`,
      );
    },
  });
}

export function registerCloudCommand(program: Command): void {
  const cloud = reportParseErrorsAsJson(
    program
      .command("cloud")
      .description("render on the render service (SVC_API_URL, default: the local service)"),
  );
  registerCloudRenderCommand(cloud);
  registerCloudGetCommand(cloud);
  registerCloudListCommand(cloud);
  registerCloudDeleteCommand(cloud);
  registerCloudDownloadCommand(cloud);
}

/** `svc cloud ...`, `svc publish` and `svc auth ...`. */
export function registerCloudCommands(program: Command): void {
  registerCloudCommand(program);
  registerPublishCommand(program);
  registerAuthCommand(program);
}
