// How a command's action runs, written once for every `noun verb`: the command parses its flags
// into an options object and hands run<Verb>(options, io) to runAction, which gives it a signal
// that fires on Ctrl+C, and turns a failure into one error line (or `{error}` with --json) and an
// exit code (src/cli/errors.ts). run<Verb> does the work, prints through io and returns a result
// that tests can look at.
import { reportError, withInterruptHint } from "./errors";
import type { CliIo } from "./io";

/** An AbortSignal that fires on Ctrl+C for the duration of a command. */
export function interruptSignal(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.on("SIGINT", onSigint);
  return { signal: controller.signal, dispose: () => process.off("SIGINT", onSigint) };
}

/**
 * Runs one command's work. `interruptedHint` is what to say after Ctrl+C (what was left running
 * and how to pick it up); it is asked for only then, so it can name state the work reached.
 */
export async function runAction(
  io: CliIo,
  json: boolean | undefined,
  work: (signal: AbortSignal) => Promise<unknown>,
  interruptedHint?: () => string,
): Promise<void> {
  const interrupt = interruptSignal();
  try {
    await work(interrupt.signal);
  } catch (error) {
    reportError(
      interruptedHint ? withInterruptHint(error, interruptedHint()) : error,
      Boolean(json),
      io,
    );
  } finally {
    interrupt.dispose();
  }
}

/** The one way a command prints its --json result: indented, snake_case keys like the API's. */
export function printJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
