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
import type { CliIo } from "./io";
import { reportParseErrorsAsJson } from "./errors";

export function registerCloudCommand(program: Command, io: CliIo): void {
  const cloud = reportParseErrorsAsJson(
    program
      .command("cloud")
      .description("render on the render service (SVC_API_URL, default: the local service)"),
    io,
  );
  registerCloudRenderCommand(cloud, io);
  registerCloudGetCommand(cloud, io);
  registerCloudListCommand(cloud, io);
  registerCloudDeleteCommand(cloud, io);
  registerCloudDownloadCommand(cloud, io);
}

/** `svc cloud ...`, `svc publish` and `svc auth ...`. */
export function registerCloudCommands(program: Command, io: CliIo): void {
  registerCloudCommand(program, io);
  registerPublishCommand(program, io);
  registerAuthCommand(program, io);
}
