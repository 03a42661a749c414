// Renders on this machine, each render in its own child process — the sandbox (sandbox.ts) —
// with its own process group and temp folder inside the render's work folder. At the time limit
// (or when the server stops) the whole group is killed with SIGKILL: the sandbox is not trusted
// to stop itself. The engine starts Chromium itself (over a pipe, src/engine/cdp.ts) inside that
// group; in case a helper process of the browser leaves it, on Linux every process whose command
// line names the render's work folder (Chromium's profile and FFmpeg's files are there) is killed
// too, and the render ends only once none is left; the job then removes the work folder, and
// nothing is stored.
import { fork, type ChildProcess } from "node:child_process";
import { mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ENTRY_FILE } from "./compositions";
import type { NetworkAccess } from "svc/engine";
import { RenderFailure, type RenderOutcome, type Renderer, type RenderRun } from "./jobs";
import type { RenderSpec } from "./request";
import type { SandboxJob, SandboxMessage } from "./sandbox";

const SANDBOX_ENTRY = new URL("./sandbox.ts", import.meta.url);
/** The sandbox runs TypeScript like the server does. */
const TSX_LOADER = import.meta.resolve("tsx");

export class SandboxRenderer implements Renderer {
  /** `allowNetwork`: what a render's page may reach beyond its files (off unless configured). */
  constructor(private readonly settings: { allowNetwork: NetworkAccess }) {}

  async render(spec: RenderSpec, run: RenderRun): Promise<RenderOutcome> {
    const tempDir = join(run.workDir, "sandbox-tmp");
    await mkdir(tempDir, { recursive: true });
    const child = fork(SANDBOX_ENTRY, {
      detached: true,
      execArgv: ["--import", TSX_LOADER],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      serialization: "json",
    });
    let outcome: SandboxMessage | undefined;
    child.on("message", (message: SandboxMessage) => {
      if (message.type === "progress") {
        run.onProgress({
          progress: message.framesTotal > 0 ? message.framesDone / message.framesTotal : 0,
          etaSeconds: message.etaSeconds,
        });
      } else {
        outcome = message;
      }
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    const kill = () => killSandbox(child, run.workDir);
    run.signal.addEventListener("abort", kill, { once: true });
    try {
      const job: SandboxJob = {
        type: "render",
        tempDir,
        options: {
          projectDir: spec.composition.dir,
          composition: ENTRY_FILE,
          output: run.output,
          variables: spec.variables,
          strictVariables: true,
          ...spec.settings,
          workers: "auto",
          thumbnail: false,
          allowNetwork: this.settings.allowNetwork,
        },
      };
      if (run.signal.aborted) kill();
      else child.send(job);
      const { code, signal } = await exited;
      if (run.signal.aborted) throw run.signal.reason;
      if (outcome?.type === "done") return { warnings: outcome.warnings };
      if (outcome?.type === "failed") throw new RenderFailure(outcome.code, outcome.message);
      throw new RenderFailure(
        "render_failed",
        `The render process ended ${signal ? `on ${signal}` : `with exit code ${code}`} without a result; see the server log.`,
      );
    } finally {
      run.signal.removeEventListener("abort", kill);
      // Whatever the sandbox left running (it exited, but Chromium may linger a moment).
      await killProcessesNaming(run.workDir);
    }
  }
}

function killSandbox(child: ChildProcess, workDir: string): void {
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  void killProcessesNaming(workDir);
}

/**
 * SIGKILLs every process whose command line mentions `marker` (Linux; elsewhere a no-op), and
 * waits (up to 5 s) until none is left: a kill is delivered asynchronously, and on a loaded machine
 * a process may still run for a moment, so a render's result is published only once its
 * processes are really gone.
 */
async function killProcessesNaming(marker: string): Promise<void> {
  if (process.platform !== "linux") return;
  for (let round = 0; round < KILL_ROUNDS; round++) {
    const found = await processesNaming(marker);
    if (found.length === 0) return;
    for (const pid of found) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Exited meanwhile.
      }
    }
    await sleep(KILL_ROUND_MS);
  }
}

const KILL_ROUNDS = 50;
const KILL_ROUND_MS = 100;

/** Live processes whose command line mentions `marker` (a zombie's is empty). */
async function processesNaming(marker: string): Promise<number[]> {
  const pids = await readdir("/proc").catch(() => [] as string[]);
  const found = await Promise.all(
    pids
      .filter((pid) => /^\d+$/.test(pid) && Number(pid) !== process.pid)
      .map(async (pid) => {
        const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
        return cmdline.includes(marker) ? Number(pid) : undefined;
      }),
  );
  return found.filter((pid): pid is number => pid !== undefined);
}
