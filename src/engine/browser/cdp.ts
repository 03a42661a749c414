// A small Chrome DevTools Protocol client over --remote-debugging-pipe, for the render path.
// Why not playwright-core, which the tests and tools use: a render needs a dozen protocol calls,
// and playwright-core costs ~1 s to import and routes every message through its client/server
// layers (a render sends two per frame, one of them a 300 KB screenshot). The pipe (fd 3 to the
// browser, fd 4 back, messages ending in NUL) needs no listening port, so no other local user can
// drive the browser, and the browser quits when our end closes.
import { spawn, type ChildProcess } from "node:child_process";
import { chmod, chown, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { EngineError } from "../errors";

type EventHandler = (params: Record<string, unknown>) => void;

interface Pending {
  resolve: (value: Record<string, unknown>) => void;
  reject: (error: Error) => void;
  method: string;
  timer: NodeJS.Timeout;
}

export interface BrowserLaunch {
  executablePath: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** How long the browser may take to answer its first message. */
  timeoutMs?: number;
  /** How long any later command may go unanswered (default: browserCommandTimeoutMs()). */
  commandTimeoutMs?: number;
  /** A command the browser starts behind (its network namespace) and the user it runs as. */
  confinement?: { prefix: string[]; uid?: number; gid?: number };
}

/**
 * How long a command may go unanswered before the browser counts as stalled. Generous: the
 * slowest command a render sends is a 4K frame's read-back on a loaded machine (seconds); a
 * command that takes longer means a stuck page (a script that never returns) or browser, and a
 * render failing with the command's name beats a render that hangs until its job times out.
 */
export const DEFAULT_COMMAND_TIMEOUT_SECONDS = 120;

/** The command timeout from SVC_BROWSER_TIMEOUT_SECONDS, or the default. */
export function browserCommandTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SVC_BROWSER_TIMEOUT_SECONDS?.trim();
  if (!raw) return DEFAULT_COMMAND_TIMEOUT_SECONDS * 1000;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new EngineError(
      "invalid_options",
      `SVC_BROWSER_TIMEOUT_SECONDS is "${raw}", not a number of seconds above 0.`,
      `Set it to how long the browser may take to answer one command, e.g. ${DEFAULT_COMMAND_TIMEOUT_SECONDS}, or unset it.`,
      undefined,
      { option: "browser_timeout" },
    );
  }
  return seconds * 1000;
}

/** How much of the browser's stderr is kept for an error message. */
const STDERR_TAIL_BYTES = 4096;
/** A browser that died by a signal before its first answer (CdpBrowser.launch starts another). */
class CrashedAtStart extends Error {
  constructor(readonly error: EngineError) {
    super(error.message);
  }
}

/**
 * Where profiles of browsers run as another user go: the system's /tmp, not TMPDIR, which is
 * often a folder only this user may enter (tests, services with a private temp dir). The folder
 * is this user's, and others may pass through it (0711) but not list it.
 */
async function sharedProfileRoot(): Promise<string> {
  const root = join("/tmp", `svc-browser-profiles-${process.getuid?.() ?? 0}`);
  await mkdir(root, { recursive: true, mode: 0o711 });
  await chmod(root, 0o711);
  return root;
}

/** How long Browser.close may take before the process is killed. */
const CLOSE_GRACE_MS = 5000;

export class CdpBrowser {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly handlers = new Map<string, Set<EventHandler>>();
  private stderrTail = "";
  private exitError: EngineError | undefined;
  private closing: Promise<void> | undefined;
  /** A command went unanswered: the browser is stuck, and close() kills it at once. */
  private stalled = false;
  /** Settles when the browser process has exited and been waited for. */
  readonly exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    private readonly toBrowser: Writable,
    fromBrowser: Readable,
    private readonly userDataDir: string,
    private readonly commandTimeoutMs: number,
  ) {
    this.exited = new Promise((done) => child.once("exit", () => done()));
    child.once("exit", (code, signal) => {
      this.exitError ??= new EngineError(
        "capture_failed",
        `The browser quit unexpectedly (${signal ?? `exit code ${code}`})${this.stderrSummary()}.`,
        "Render again; if it keeps failing, run `svc doctor` to check the browser.",
      );
      for (const pending of this.pending.values()) {
        clearTimeout(pending.timer);
        pending.reject(this.exitError);
      }
      this.pending.clear();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
    });
    let buffered: Buffer[] = [];
    fromBrowser.on("data", (chunk: Buffer) => {
      let start = 0;
      for (let end = chunk.indexOf(0); end !== -1; end = chunk.indexOf(0, start)) {
        buffered.push(chunk.subarray(start, end));
        const text = Buffer.concat(buffered).toString("utf8");
        buffered = [];
        start = end + 1;
        this.dispatch(JSON.parse(text) as Record<string, unknown>);
      }
      if (start < chunk.length) buffered.push(chunk.subarray(start));
    });
    // A write after the browser died fails here; the exit handler reports it.
    toBrowser.on("error", () => undefined);
    fromBrowser.on("error", () => undefined);
  }

  /**
   * Starts the browser with a fresh profile folder and waits until it answers. A browser that
   * crashes (dies by a signal such as SIGSEGV) before its first answer is started once more: a
   * rare start-up crash of Chromium otherwise fails the whole render (seen in CI, 46 ms after the
   * start). A browser that exits with a code fails at once, as that repeats.
   */
  static async launch(options: BrowserLaunch): Promise<CdpBrowser> {
    try {
      return await CdpBrowser.launchOnce(options);
    } catch (error) {
      if (!(error instanceof CrashedAtStart)) throw error;
      return CdpBrowser.launchOnce(options).catch((second: unknown) => {
        throw second instanceof CrashedAtStart ? second.error : second;
      });
    }
  }

  private static async launchOnce(options: BrowserLaunch): Promise<CdpBrowser> {
    const { prefix = [], uid, gid } = options.confinement ?? {};
    const asOtherUser = uid !== undefined && gid !== undefined;
    const userDataDir = await mkdtemp(
      join(asOtherUser ? await sharedProfileRoot() : tmpdir(), "svc-chromium-"),
    );
    // A browser started as another user owns its profile, and keeps its files there (HOME).
    if (asOtherUser) await chown(userDataDir, uid, gid);
    const browserArgs = [
      ...options.args,
      `--user-data-dir=${userDataDir}`,
      "--remote-debugging-pipe",
    ];
    const child = spawn(
      prefix[0] ?? options.executablePath,
      prefix.length > 0
        ? [...prefix.slice(1), options.executablePath, ...browserArgs]
        : browserArgs,
      {
        env: asOtherUser
          ? {
              ...options.env,
              HOME: userDataDir,
              XDG_CONFIG_HOME: userDataDir,
              XDG_CACHE_HOME: userDataDir,
            }
          : options.env,
        stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"],
        ...(asOtherUser ? { uid, gid } : {}),
      },
    );
    const spawned = new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    try {
      await spawned;
    } catch (error) {
      await rm(userDataDir, { recursive: true, force: true });
      throw new EngineError(
        "browser_not_found",
        `Could not start the browser at ${options.executablePath}: ${(error as Error).message}.`,
        "Run `svc doctor` to see which browser svc uses, or set SVC_CHROMIUM_PATH.",
      );
    }
    const browser = new CdpBrowser(
      child,
      child.stdio[3] as Writable,
      child.stdio[4] as Readable,
      userDataDir,
      options.commandTimeoutMs ?? browserCommandTimeoutMs(),
    );
    const timeoutMs = options.timeoutMs ?? 30_000;
    try {
      await browser.send("Browser.getVersion", {}, undefined, timeoutMs);
    } catch (error) {
      await browser.close();
      const crashed = browser.exitError;
      if (crashed && error === crashed && browser.child.signalCode !== null) {
        throw new CrashedAtStart(crashed);
      }
      if (error instanceof EngineError && error.code === "timeout") {
        throw new EngineError(
          "timeout",
          `The browser did not start within ${Math.round(timeoutMs / 1000)} s${browser.stderrSummary()}.`,
          "Run `svc doctor` to check the browser.",
        );
      }
      throw error;
    }
    return browser;
  }

  /**
   * Sends a command (to a page when `sessionId` is given) and resolves with its result; fails
   * with a "timeout" EngineError naming the command when no answer comes within the command
   * timeout (`timeoutMs` for this one command).
   */
  send<T = Record<string, unknown>>(
    method: string,
    params: object = {},
    sessionId?: string,
    timeoutMs = this.commandTimeoutMs,
  ): Promise<T> {
    if (this.exitError) return Promise.reject(this.exitError);
    const id = this.nextId++;
    const message = JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) });
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.stalled = true;
        reject(this.stalledError(method, timeoutMs));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as Pending["resolve"], reject, method, timer });
      this.toBrowser.write(message + "\0");
    });
  }

  /** The browser answers commands: it has not quit, been killed or asked to close. */
  get running(): boolean {
    return !this.exitError && !this.closing && !this.stalled;
  }

  /** Calls `handler` for each event of this name (from the page `sessionId`, if given). */
  on(method: string, handler: EventHandler, sessionId?: string): void {
    const key = sessionId ? `${sessionId}:${method}` : method;
    let set = this.handlers.get(key);
    if (!set) this.handlers.set(key, (set = new Set()));
    set.add(handler);
  }

  /** Asks the browser to quit, kills it if it does not, and removes its profile folder. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (this.stalled) {
        this.child.kill("SIGKILL");
      } else if (!this.exitError) {
        this.send("Browser.close").catch(() => undefined);
        this.toBrowser.end();
        const timer = setTimeout(() => this.child.kill("SIGKILL"), CLOSE_GRACE_MS);
        await this.exited;
        clearTimeout(timer);
      }
      await this.exited;
      await rm(this.userDataDir, { recursive: true, force: true, maxRetries: 3 });
    })();
    return this.closing;
  }

  /** Stops the browser at once (cancellation); close() still cleans up after it. */
  kill(): void {
    this.child.kill("SIGKILL");
  }

  private dispatch(message: Record<string, unknown>): void {
    if (typeof message.id === "number") {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      clearTimeout(pending.timer);
      const error = message.error as { message?: string } | undefined;
      if (error) {
        pending.reject(new Error(`${pending.method}: ${error.message ?? "protocol error"}`));
      } else {
        pending.resolve((message.result ?? {}) as Record<string, unknown>);
      }
      return;
    }
    const method = message.method as string;
    const params = (message.params ?? {}) as Record<string, unknown>;
    const key = message.sessionId ? `${message.sessionId as string}:${method}` : method;
    for (const handler of this.handlers.get(key) ?? []) handler(params);
  }

  private stalledError(method: string, timeoutMs: number): EngineError {
    const seconds = Math.round(timeoutMs / 100) / 10;
    return new EngineError(
      "timeout",
      `The browser stopped answering: ${method} got no reply within ${seconds} s${this.stderrSummary()}.`,
      "Render again. If it happens again at the same point, look for a script in the composition that never returns (an endless loop); on a very busy machine, give the browser more time with SVC_BROWSER_TIMEOUT_SECONDS.",
      undefined,
      { command: method },
    );
  }

  private stderrSummary(): string {
    const lines = this.stderrTail.trim().split("\n").filter(Boolean);
    return lines.length > 0 ? `: ${lines.slice(-3).join(" / ")}` : "";
  }
}
