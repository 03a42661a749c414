// The embedded render service (SPEC.md section 0/7): with the setting "service" = local, the app
// runs `svc server` as a child process (never in-process: src/main may not import src/server, and a
// crashing render engine must not take the window down). The supervisor starts it on first need,
// waits for /readyz, restarts it on the same port after a crash (so signed URLs and polling queued
// renders keep working), stops it on quit, and reports its state for the UI. When something already
// answers on the configured port (e.g. a service the CLI started) it is used as it is.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import type { ServiceState } from "../shared/ipc";
import { backoffDelay } from "../node/index";
import { isServiceAnswering } from "../core/index";

export interface SupervisorOptions {
  /** Path of bin/svc.js. */
  svcBin: string;
  dataDir: string;
  /** 0: a free port at the first start, then kept for restarts. */
  port: number;
  host?: string;
  /** Extra environment for the child (tests shorten the service's lease, for example). */
  env?: NodeJS.ProcessEnv;
  readyTimeoutMs?: number;
  /** First restart delay; doubled per consecutive crash up to 10 s. */
  restartDelayMs?: number;
  /** Consecutive failed starts before giving up (status "failed"). */
  maxRestarts?: number;
}

const LISTENING = /svc server listening on (http:\/\/\S+)/;

export class ServiceSupervisor {
  private child: ChildProcess | undefined;
  private port: number;
  private url: string | undefined;
  private current: ServiceState;
  private attempt: Promise<void> | undefined;
  private stopping = false;
  private restarts = 0;
  private consecutiveFailures = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(state: ServiceState) => void>();
  private readonly readyWaiters = new Set<() => void>();

  constructor(private readonly options: SupervisorOptions) {
    this.port = options.port;
    this.current = {
      mode: "local",
      status: "stopped",
      url: undefined,
      restarts: 0,
      message: undefined,
    };
  }

  state(): ServiceState {
    return { ...this.current };
  }

  /** Process id of the service child (undefined when not running or not ours). */
  get pid(): number | undefined {
    return this.child?.exitCode === null ? this.child.pid : undefined;
  }

  onState(listener: (state: ServiceState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts the service if needed and resolves with its URL once it is ready. */
  ensureStarted(signal?: AbortSignal): Promise<string> {
    return this.waitReady(signal);
  }

  /**
   * Resolves with the URL when the service is (again) ready, starting it when it is stopped or
   * failed; rejects when a start gives up.
   */
  waitReady(signal?: AbortSignal): Promise<string> {
    if (this.current.status === "ready" && this.url) return Promise.resolve(this.url);
    if (this.current.status === "stopped" || this.current.status === "failed") {
      this.stopping = false;
      this.consecutiveFailures = 0;
      this.kick();
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.readyWaiters.delete(done);
        reject(signal?.reason ?? new Error("aborted"));
      };
      const done = () => {
        signal?.removeEventListener("abort", onAbort);
        if (this.current.status === "ready" && this.url) resolve(this.url);
        else reject(new Error(this.current.message ?? "the local render service is not running"));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
      this.readyWaiters.add(done);
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    await this.attempt?.catch(() => undefined);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    this.child = undefined;
    this.url = undefined;
    this.setState({ status: "stopped", url: undefined, message: undefined });
    this.settleWaiters();
  }

  /** One start attempt, unless one is running or a restart is already scheduled. */
  private kick(): void {
    if (this.attempt || this.restartTimer) return;
    this.attempt = this.startOnce()
      .then(
        (url) => {
          this.consecutiveFailures = 0;
          this.url = url;
          this.setState({
            status: "ready",
            url,
            message: this.child ? undefined : "using the service already running on this port",
          });
          this.settleWaiters();
        },
        (error: unknown) => {
          const message = (error as Error).message;
          this.consecutiveFailures++;
          if (this.stopping) return;
          if (this.consecutiveFailures < (this.options.maxRestarts ?? 5)) {
            this.scheduleRestart(message);
          } else {
            this.setState({ status: "failed", message });
            this.settleWaiters();
          }
        },
      )
      .finally(() => (this.attempt = undefined));
  }

  private async startOnce(): Promise<string> {
    const host = this.options.host ?? "127.0.0.1";
    if (this.port !== 0 && !this.child) {
      const url = `http://${host}:${this.port}`;
      if (await isServiceAnswering(url)) {
        // Someone else's service (the CLI's, or an earlier app) on our port: use it.
        return url;
      }
    }
    this.setState({ status: this.restarts > 0 ? "restarting" : "starting" });
    if (this.stopping) throw new Error("stopping");
    return this.spawnAndWait(host);
  }

  private async spawnAndWait(host: string): Promise<string> {
    const child = spawn(
      process.execPath,
      [
        this.options.svcBin,
        "server",
        "--host",
        host,
        "--port",
        String(this.port),
        "--data-dir",
        this.options.dataDir,
      ],
      {
        // Inside Electron, process.execPath is the Electron binary: make it behave as Node.
        env: { ...process.env, ...this.options.env, ELECTRON_RUN_AS_NODE: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    this.child = child;
    let output = "";
    let errors = "";
    child
      .stderr!.setEncoding("utf8")
      .on("data", (chunk: string) => (errors = (errors + chunk).slice(-2000)));
    const listening = new Promise<string>((resolve, reject) => {
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
        output = (output + chunk).slice(-4000);
        const match = LISTENING.exec(output);
        if (match) resolve(match[1]!);
      });
      child.once("error", reject);
      child.once("exit", (code, signal) =>
        reject(
          new Error(
            `the local render service exited (${signal ?? code}) before it was ready${errors.trim() ? `: ${lastLine(errors)}` : ""}`,
          ),
        ),
      );
    });
    child.once("exit", () => this.onExit(child));
    listening.catch(() => undefined);
    try {
      const deadline = Date.now() + (this.options.readyTimeoutMs ?? 60_000);
      const url = await withDeadline(
        listening,
        deadline,
        "the local render service did not start in time",
      );
      this.port = Number(new URL(url).port);
      while (!(await isReady(url))) {
        if (child.exitCode !== null)
          throw new Error("the local render service exited while starting");
        if (Date.now() > deadline)
          throw new Error(`the local render service at ${url} did not become ready`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return url;
    } catch (error) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      if (this.child === child) this.child = undefined;
      throw error;
    }
  }

  private onExit(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = undefined;
    // A child that dies while starting is handled by the start attempt itself.
    if (this.stopping || this.current.status !== "ready") return;
    this.url = undefined;
    this.scheduleRestart(
      `the local render service stopped (${child.signalCode ?? child.exitCode})`,
    );
  }

  private scheduleRestart(reason: string): void {
    this.restarts++;
    this.setState({ status: "restarting", url: undefined, message: `${reason}; restarting` });
    const base = this.options.restartDelayMs ?? 500;
    const delay = backoffDelay(this.consecutiveFailures, { baseMs: base, capMs: 10_000 });
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.stopping) this.kick();
    }, delay);
  }

  private setState(change: Partial<ServiceState>): void {
    const next = { ...this.current, ...change, restarts: this.restarts };
    if (JSON.stringify(next) === JSON.stringify(this.current)) return;
    this.current = next;
    for (const listener of this.listeners) listener(this.state());
  }

  private settleWaiters(): void {
    const waiters = [...this.readyWaiters];
    this.readyWaiters.clear();
    for (const waiter of waiters) waiter();
  }
}

async function isReady(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

function withDeadline<T>(promise: Promise<T>, deadline: number, message: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), Math.max(0, deadline - Date.now()));
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error as Error);
      },
    );
  });
}

function lastLine(text: string): string {
  return text.trim().split(/\r?\n/).pop() ?? "";
}
