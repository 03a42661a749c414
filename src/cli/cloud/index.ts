// `svc cloud`: render on the render service and manage renders. Each verb lives in its own file
// of this folder (render, get, list, cancel, delete, download) with its options type and run<Verb>.
import type { Command } from "commander";
import { reportParseErrorsAsJson } from "../errors";
import type { CliIo } from "../io";
import { registerCloudCancelCommand } from "./cancel";
import { registerCloudDeleteCommand } from "./delete";
import { registerCloudDownloadCommand } from "./download";
import { registerCloudGetCommand } from "./get";
import { registerCloudListCommand } from "./list";
import { registerCloudRenderCommand } from "./render";

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
  registerCloudCancelCommand(cloud, io);
  registerCloudDeleteCommand(cloud, io);
  registerCloudDownloadCommand(cloud, io);
}
