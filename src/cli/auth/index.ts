// `svc auth login|status|refresh|logout`: sign in to the render service. Each verb lives in its
// own file of this folder with its options type and run<Verb>.
import type { Command } from "commander";
import { reportParseErrorsAsJson } from "../errors";
import type { CliIo } from "../io";
import { registerAuthLoginCommand } from "./login";
import { registerAuthLogoutCommand } from "./logout";
import { registerAuthRefreshCommand } from "./refresh";
import { registerAuthStatusCommand } from "./status";

export function registerAuthCommand(program: Command, io: CliIo): void {
  const auth = reportParseErrorsAsJson(program.command("auth"), io).description(
    "sign in to the render service",
  );
  registerAuthLoginCommand(auth, io);
  registerAuthStatusCommand(auth, io);
  registerAuthLogoutCommand(auth, io);
  registerAuthRefreshCommand(auth, io);
}
