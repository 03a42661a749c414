// The findings the app shows under the preview (`project.check`): `svc check --json` run as a child
// process, as the supervisor runs `svc server` (src/main may not import the engine, and a page that
// hangs its browser must not take the window down). The check runs with network access off, as the
// render service renders by default, so a font the preview fetches from the web but a render would
// be refused is reported. A newer check of the same project and entry file stops the older one.
import { spawn } from "node:child_process";
import type { Finding } from "../shared/findings";
import { appError } from "./ipc-errors";

/** A check loads the page and seeks through it; much longer means its browser is stuck. */
const CHECK_TIMEOUT_MS = 120_000;

export interface ProjectCheckInput {
  /** The project folder (already resolved). */
  root: string;
  composition: string;
  variables?: Record<string, unknown>;
}

export class ProjectChecks {
  private readonly running = new Map<string, AbortController>();

  /** `svcBin`: path of bin/svc.js. */
  constructor(private readonly svcBin: string) {}

  async check(input: ProjectCheckInput): Promise<Finding[]> {
    const key = `${input.root}\u0000${input.composition}`;
    this.running.get(key)?.abort();
    const controller = new AbortController();
    this.running.set(key, controller);
    try {
      return await this.run(input, controller.signal);
    } finally {
      if (this.running.get(key) === controller) this.running.delete(key);
    }
  }

  /** Stops every running check (the app is closing). */
  close(): void {
    for (const controller of this.running.values()) controller.abort();
    this.running.clear();
  }

  private run(input: ProjectCheckInput, signal: AbortSignal): Promise<Finding[]> {
    const args = [
      this.svcBin,
      "check",
      input.root,
      "--composition",
      input.composition,
      "--no-network",
      "--json",
      ...(input.variables && Object.keys(input.variables).length > 0
        ? ["--variables", JSON.stringify(input.variables)]
        : []),
    ];
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, args, {
        // Inside Electron, process.execPath is the Electron binary: make it behave as Node.
        env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" },
        stdio: ["ignore", "pipe", "pipe"],
        signal,
        timeout: CHECK_TIMEOUT_MS,
        killSignal: "SIGINT",
      });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.stderr
        .setEncoding("utf8")
        .on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-8000)));
      child.once("error", (error) => {
        if (signal.aborted) {
          reject(
            appError(
              "check_superseded",
              "A newer check of this composition replaced this one.",
              "Nothing to do: the newer check's findings are shown.",
            ),
          );
        } else {
          reject(appError("check_failed", `The check could not run: ${error.message}`));
        }
      });
      child.once("close", (code) => {
        if (signal.aborted) return; // answered by the "error" listener
        try {
          resolve(parseCheckOutput(stdout, code, stderr));
        } catch (error) {
          reject(error);
        }
      });
    });
  }
}

/** `svc check --json`'s answer: an array of findings, or `{error}` (exit 1 or 2). */
export function parseCheckOutput(stdout: string, code: number | null, stderr = ""): Finding[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    const why = crashLine(stderr) || `it exited with ${code ?? "a signal"}`;
    throw appError(
      "check_failed",
      `The check did not finish: ${why}`,
      "Run `svc check` in the project folder to see more.",
    );
  }
  if (Array.isArray(parsed)) return parsed as Finding[];
  const error = (parsed as { error?: { code?: string; message?: string; hint?: string } }).error;
  throw appError(error?.code ?? "check_failed", error?.message ?? "The check failed.", error?.hint);
}

/**
 * The line of a crashed check's stderr that says what went wrong: Node ends an uncaught error's
 * report with its own version ("Node.js v22..."), so the error's own line is the one to show.
 */
function crashLine(stderr: string): string | undefined {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !/^Node\.js v\d/.test(line));
  return lines.findLast((line) => /^[\w.]*(Error|Exception)\b/.test(line)) ?? lines.at(-1);
}
