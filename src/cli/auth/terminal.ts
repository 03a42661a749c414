// Whether a sign-in flow can work in this terminal: the CLI's environment heuristics (an SSH
// session has no browser on this computer; CI or a pipe has nobody to enter a device code).
// The sign-in flows themselves are src/core/oauth/.
import type { CliIo } from "../io";

/** Which of stdin and stdout are terminals. */
export function terminalOf(io: CliIo): { stdin: boolean; stdout: boolean } {
  return { stdin: Boolean(io.stdin.isTTY), stdout: Boolean(io.stdout.isTTY) };
}

/** Why the browser flow would not work here (an SSH session, no terminal), or undefined. */
export function remoteTerminalReason(
  env: NodeJS.ProcessEnv,
  tty: { stdin: boolean; stdout: boolean },
): string | undefined {
  if (env.SSH_CONNECTION || env.SSH_CLIENT || env.SSH_TTY) return "this looks like an SSH session";
  if (!tty.stdin || !tty.stdout) return "this is not an interactive terminal";
  return undefined;
}

export function isTruthyEnv(value: string | undefined): boolean {
  return value !== undefined && !/^(|0|false|no|off)$/i.test(value.trim());
}

/** Why the device flow is refused here (CI, no terminal), or undefined. */
export function deviceLoginRefusal(
  env: NodeJS.ProcessEnv,
  tty: { stdin: boolean; stdout: boolean },
): string | undefined {
  if (isTruthyEnv(env.CI)) return "CI is set: nobody is there to enter the code";
  if (!tty.stdin || !tty.stdout) return "stdin or stdout is not a terminal";
  return undefined;
}
