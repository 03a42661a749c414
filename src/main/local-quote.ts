// The time a render would take on this computer, for the render options panel (`project.quote`):
// `svc render --quote --json` run as a child process, as project-check.ts runs `svc check` (src/main
// may not import the engine, and a stuck browser must not take the window down). It draws a few
// sampled frames as `svc render` would; a newer quote of the same project stops the older one.
import { spawn } from "node:child_process";
import type { LocalRenderQuote } from "../shared/ipc";
import type { QueuedRenderSettings } from "../shared/ipc";
import { appError } from "./ipc-errors";

/** Sampling starts browsers and draws ~30 frames; much longer means a browser is stuck. */
const QUOTE_TIMEOUT_MS = 120_000;

export class LocalQuotes {
  private readonly running = new Map<string, AbortController>();

  /** `svcBin`: path of bin/svc.js. */
  constructor(private readonly svcBin: string) {}

  async quote(
    root: string,
    composition: string,
    settings: Omit<QueuedRenderSettings, "title" | "strictVariables">,
  ): Promise<LocalRenderQuote> {
    const key = `${root}\u0000${composition}`;
    this.running.get(key)?.abort();
    const controller = new AbortController();
    this.running.set(key, controller);
    const args = [
      this.svcBin,
      "render",
      root,
      "--composition",
      composition,
      "--quote",
      "--json",
      ...["--fps", String(settings.fps), "--quality", settings.quality],
      ...["--format", settings.format, "--resolution", settings.resolution],
      ...(settings.aspectRatio ? ["--aspect-ratio", settings.aspectRatio] : []),
      ...(settings.variables && Object.keys(settings.variables).length > 0
        ? ["--variables", JSON.stringify(settings.variables)]
        : []),
    ];
    try {
      return await new Promise((resolve, reject) => {
        const child = spawn(process.execPath, args, {
          env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" },
          stdio: ["ignore", "pipe", "pipe"],
          signal: controller.signal,
          timeout: QUOTE_TIMEOUT_MS,
          killSignal: "SIGINT",
        });
        let stdout = "";
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
        child.stderr.resume();
        child.once("error", (error) =>
          reject(
            controller.signal.aborted
              ? appError("quote_superseded", "A newer estimate replaced this one.")
              : appError("quote_failed", `The estimate could not run: ${error.message}`),
          ),
        );
        child.once("close", (code) => {
          if (controller.signal.aborted) return;
          try {
            const parsed = JSON.parse(stdout) as LocalRenderQuote | { error: { message: string } };
            if ("error" in parsed) throw appError("quote_failed", parsed.error.message);
            resolve(parsed);
          } catch (error) {
            reject(
              error instanceof Error && "code" in error
                ? error
                : appError(
                    "quote_failed",
                    `The estimate did not finish (exit ${code ?? "signal"}).`,
                  ),
            );
          }
        });
      });
    } finally {
      if (this.running.get(key) === controller) this.running.delete(key);
    }
  }

  close(): void {
    for (const controller of this.running.values()) controller.abort();
    this.running.clear();
  }
}
