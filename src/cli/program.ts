// Builds the `svc` command tree, shaped like `gh`: each `noun verb` lives in its own small file
// (cloud/render.ts, auth/login.ts, ...) with an options type, a run<Verb>(options, io) that does
// the work and returns a result, and a register function that parses flags into the options and
// runs it through command.ts; the program is built by a function, with the IO its commands use (io.ts), so
// tests run it in-process with their own streams and environment.
import { Command } from "commander";
import { processIo, type CliIo } from "./io";
import { registerCheckCommand } from "./check";
import { registerDoctorCommand } from "./doctor";
import { registerRenderCommand } from "./render";
import { registerStillCommand } from "./still";
import { registerTemplatesCommands } from "./templates";
import { registerCaptionsCommands } from "./transcribe";
import { VERSION } from "./version";

/**
 * Commands that need none of the service client (HTTP, sign-in, keychain: ~0.5 s of imports). When
 * one of them is the command being run, only these are loaded, so `svc render` starts sooner.
 */
const LOCAL_COMMANDS = new Set([
  "render",
  "still",
  "check",
  "doctor",
  "templates",
  "init",
  "captions",
]);

/** `command` is the first word after `svc`, when known: the tree is trimmed to what it needs. */
export async function buildProgram(io: CliIo = processIo(), command?: string): Promise<Command> {
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
  registerStillCommand(program, io);
  registerCheckCommand(program, io);
  registerDoctorCommand(program, io);
  registerTemplatesCommands(program, io);
  registerCaptionsCommands(program, io);
  if (command !== undefined && LOCAL_COMMANDS.has(command)) return program;
  const [
    { registerServerCommand },
    { registerCloudCommand },
    { registerPublishCommand },
    { registerAuthCommand },
  ] = await Promise.all([
    import("./server"),
    import("./cloud"),
    import("./publish"),
    import("./auth"),
  ]);
  registerServerCommand(program, io);
  registerCloudCommand(program, io);
  registerPublishCommand(program, io);
  registerAuthCommand(program, io);
  return program;
}
