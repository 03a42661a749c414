// Entry point of the `svc` binary: parse, run, and turn failures into exit codes
// (0 ok, 1 failure, 2 usage error) without stack traces for user mistakes.
import { CommanderError } from "commander";
import { reportError } from "./errors";
import { buildProgram } from "./program";

async function main(): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      process.exitCode =
        error.code === "commander.helpDisplayed" || error.code === "commander.version" ? 0 : 2;
      return;
    }
    reportError(error, process.argv.includes("--json"));
  }
}

await main();
