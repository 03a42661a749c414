// Builds the `svc` command tree. Each `noun verb` lives in its own small file and registers
// itself here; the program is built by a function, with the IO its commands use (io.ts), so
// tests run it in-process with their own streams and environment.
import { Command } from "commander";
import { processIo, type CliIo } from "./io";
import { registerDoctorCommand } from "./doctor";
import { registerRenderCommand } from "./render";
import { VERSION } from "./version";
import { registerServerCommand } from "./server";
import { registerCloudCommands } from "./cloud";

export function buildProgram(io: CliIo = processIo()): Command {
  const program = new Command("svc")
    .description("Turn HTML video compositions into MP4, WebM and MOV files.")
    .version(VERSION, "-V, --version", "print the svc version")
    .showHelpAfterError("(run `svc --help` for usage)")
    .configureOutput({
      writeOut: (text) => void io.stdout.write(text),
      writeErr: (text) => void io.stderr.write(text),
      outputError: (text, write) => write(text),
    })
    // Set before subcommands are added so they inherit it: main() maps usage errors to exit 2.
    .exitOverride();
  registerRenderCommand(program, io);
  registerDoctorCommand(program, io);
  registerServerCommand(program, io);
  registerCloudCommands(program, io);
  return program;
}
