// Builds the `svc` command tree. Each `noun verb` lives in its own small file and registers
// itself here; the program is built by a function so tests can run it in-process.
import { Command } from "commander";
import { registerDoctorCommand } from "./doctor";
import { registerRenderCommand } from "./render";
import { VERSION } from "./version";
import { registerServerCommand } from "./server";
import { registerCloudCommands } from "./cloud";

export function buildProgram(): Command {
  const program = new Command("svc")
    .description("Turn HTML video compositions into MP4, WebM and MOV files.")
    .version(VERSION, "-V, --version", "print the svc version")
    .showHelpAfterError("(run `svc --help` for usage)")
    .configureOutput({ outputError: (text, write) => write(text) })
    // Set before subcommands are added so they inherit it: main() maps usage errors to exit 2.
    .exitOverride();
  registerRenderCommand(program);
  registerDoctorCommand(program);
  registerServerCommand(program);
  registerCloudCommands(program);
  return program;
}
