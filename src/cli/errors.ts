// How the CLI reports failures: one place maps errors to exit codes (0 ok, 1 failure, 2 usage
// error) and prints them as one clear line plus a hint (in the CLI's words, src/cli/hints.ts), or
// as JSON with --json. No stack traces
// for user mistakes; unexpected errors still say what happened in one line.
import type { Command } from "commander";
import { ClientError } from "../core/local";
import { EngineError } from "../engine/contract";
import { cliHint } from "./hints";
import type { CliIo } from "./io";

/** A mistake in how the command was called: exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

export interface ReportedError {
  code: string;
  message: string;
  hint?: string;
  exitCode: 1 | 2;
}

export function describeError(error: unknown): ReportedError {
  if (error instanceof UsageError) {
    return {
      code: "usage_error",
      message: error.message,
      ...(error.hint ? { hint: error.hint } : {}),
      exitCode: 2,
    };
  }
  if (error instanceof EngineError || error instanceof ClientError) {
    const hint = cliHint(error) ?? error.hint;
    return {
      code: error.code,
      message: error.message,
      ...(hint ? { hint } : {}),
      exitCode: error instanceof ClientError && error.usage ? 2 : 1,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    code: "internal_error",
    message,
    hint: "This looks like a bug in svc; please report it with the command you ran.",
    exitCode: 1,
  };
}

/** Prints the error to stderr (or as JSON on stdout) and sets the exit code. */
export function reportError(error: unknown, json: boolean, io: CliIo): void {
  const described = describeError(error);
  if (json) {
    const { exitCode: _exitCode, ...body } = described;
    io.stdout.write(`${JSON.stringify({ error: body }, null, 2)}\n`);
  } else {
    io.stderr.write(`error: ${described.message}\n`);
    if (described.hint) io.stderr.write(`hint: ${described.hint}\n`);
  }
  io.exitCode = described.exitCode;
}

/**
 * With --json, flag errors that commander itself reports (an unknown choice, a missing argument)
 * come out as `{error: {...}}` on stdout like every other error. Subcommands created afterwards
 * inherit this output configuration.
 */
export function reportParseErrorsAsJson(command: Command, io: CliIo): Command {
  return command.configureOutput({
    outputError: (text, write) => {
      if (!process.argv.includes("--json")) return write(text);
      const message = text.replace(/^error:\s*/, "").trim();
      io.stdout.write(`${JSON.stringify({ error: { code: "usage_error", message } }, null, 2)}\n`);
    },
  });
}

/** Errors as they are, except Ctrl+C, which gets the command's own "what now" hint. */
export function withInterruptHint(error: unknown, hint: string): unknown {
  return error instanceof ClientError && error.code === "interrupted"
    ? new ClientError("interrupted", "Interrupted.", hint)
    : error;
}
