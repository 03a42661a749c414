// Entry point of the `svc` binary: parse, run, and turn failures into exit codes
// (0 ok, 1 failure, 2 usage error) without stack traces for user mistakes.
import { CommanderError } from "commander";
import { reportError } from "./errors";
import { processIo } from "./io";
import { buildProgram } from "./program";

async function main(): Promise<void> {
  const io = processIo();
  const program = await buildProgram(io, process.argv[2]);
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      io.exitCode =
        error.code === "commander.helpDisplayed" || error.code === "commander.version" ? 0 : 2;
    } else {
      reportError(error, process.argv.includes("--json"), io);
    }
  }
  process.exitCode = io.exitCode;
}

await main();
