// Render stage 2, the run: what one render holds while it runs — the project server, its
// browser pages, its segment encoders and a temp work dir — and the one place that lets them all
// go. Cancelling (the render's AbortSignal) stops every encoder and closes every page at once;
// close() returns only when every FFmpeg and browser process has exited, so no process outlives
// the render, not even as an unreaped zombie. A page is "ready" when the page runtime says so
// (fonts, images, media), polled by waitUntilReady. withRenderRun is the one place a run starts
// and ends: render, chunk, still, quote and check all go through it, with the run defaults below.
import type { CompositionInfo } from "../runtime/types";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import type { ResolvedLibrary } from "../../node/index";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { resolveChromium, type ResolvedBrowser } from "../browser/browser";
import { CapturePage } from "../browser/capture";
import type { PagePool, PageHooks, WarmPage } from "./page-pool";
import { cancelledError, EngineError } from "../errors";
import type { NetworkAccess } from "../browser/network";
import { resolveFfmpeg } from "../ffmpeg/ffmpeg";
import { startProjectServer, type ProjectServer } from "../browser/project-server";
import type { PreparedRender } from "./render-prepare";
import { runtimeScript } from "../bundles/runtime-bundle";
import { refillSpareBrowser } from "../browser/spare-browser";

/**
 * Where captured frames of one segment go; the encoder normally, a counter in benchmarks. A null
 * frame repeats the previous picture (nothing changed on screen).
 */
export interface FrameSink {
  write(frame: Buffer | null): Promise<void>;
  finish(): Promise<void>;
  /** Stops at once; a returned promise resolves when the sink's process has exited. */
  kill(): void | Promise<void>;
}

/** What the page runtime reports about the composition (`window.__svc.info()`). */
export type PageInfo = CompositionInfo;

/** The run defaults, declared once: every caller that leaves them out gets these. */
export const RUN_DEFAULTS = { allowNetwork: true, readyTimeoutSeconds: 30 } as const;

/** What a caller of withRenderRun may say about its run; the rest comes from RUN_DEFAULTS. */
export interface RenderRunRequest {
  allowNetwork?: NetworkAccess | undefined;
  readyTimeoutSeconds?: number | undefined;
  signal?: AbortSignal | undefined;
  extraArgs?: string[] | undefined;
  pool?: PagePool | undefined;
  purpose?: RunPurpose;
}

/**
 * Starts the run for `prepared`, runs `body` with it, surfaces its failure (cancellation and page
 * errors win over their effects) and closes everything it started whatever happens; a page kept
 * warm (keepWarm) goes back to the pool only when `body` succeeded.
 */
export async function withRenderRun<T>(
  prepared: PreparedRender,
  request: RenderRunRequest,
  body: (run: RenderRun) => Promise<T>,
): Promise<T> {
  const run = await RenderRun.start(prepared, {
    allowNetwork: request.allowNetwork ?? RUN_DEFAULTS.allowNetwork,
    readyTimeoutSeconds: request.readyTimeoutSeconds ?? RUN_DEFAULTS.readyTimeoutSeconds,
    signal: request.signal,
    ...(request.extraArgs ? { extraArgs: request.extraArgs } : {}),
    ...(request.pool ? { pool: request.pool } : {}),
    ...(request.purpose ? { purpose: request.purpose } : {}),
  });
  let succeeded = false;
  try {
    const result = await body(run);
    succeeded = true;
    return result;
  } catch (error) {
    throw run.failure(error);
  } finally {
    await run.close(succeeded);
  }
}

/**
 * "render" draws frames; "check" (check.ts) loads the page as a render does but only looks at it:
 * no FFmpeg, the page read by screenshot, its runtime given only the variables, and no JPEG
 * detail matching (nothing is encoded).
 */
export type RunPurpose = "render" | "check";

export interface RenderRunOptions {
  allowNetwork: NetworkAccess;
  readyTimeoutSeconds: number;
  signal: AbortSignal | undefined;
  /** Extra Chromium flags, for experiments (bench/). */
  extraArgs?: string[];
  /** Take a warm page from this pool if one fits, and give the kept page back (keepWarm). */
  pool?: PagePool;
  /** Default "render". */
  purpose?: RunPurpose;
}

export class RenderRun {
  readonly pageErrors: string[] = [];
  /** URLs the network policy refused (findings). */
  readonly blocked = new Set<string>();
  /** Why svc could not answer a refused CDN URL itself (a version not on npm...), by URL. */
  readonly refusalReasons = new Map<string, string>();
  /** The npm libraries that answered the page's CDN URLs, by URL (the render's record). */
  readonly libraries = new Map<string, ResolvedLibrary>();

  /** The libraries, one entry per package, version and file (several URLs may name one file). */
  libraryList(): ResolvedLibrary[] {
    const byKey = new Map<string, ResolvedLibrary>();
    for (const library of this.libraries.values()) {
      byKey.set(`${library.packageName}@${library.requested}/${library.path}`, library);
    }
    return [...byKey.values()].sort(
      (a, b) => a.packageName.localeCompare(b.packageName) || a.path.localeCompare(b.path),
    );
  }
  private refuse(url: string, reason: string | undefined): void {
    this.blocked.add(url);
    if (reason) this.refusalReasons.set(url, reason);
  }

  /** Every page opened for this render, closed or not. */
  private readonly sessions: CapturePage[] = [];
  private readonly encoders = new Set<FrameSink>();
  /** Encoders being stopped: close() returns only once their processes have exited. */
  private readonly stopping: Promise<void>[] = [];
  private cancelledFlag = false;
  private readonly onAbort = () => {
    this.cancelledFlag = true;
    for (const encoder of this.encoders) this.stopEncoder(encoder);
    for (const session of this.sessions) void session.close();
  };
  private readonly initScript: Promise<string>;
  private readonly hooks = new WeakMap<CapturePage, PageHooks>();
  private readonly positions = new WeakMap<CapturePage, number>();
  /** A warm page from the pool, handed out by the first openCapturePage(). */
  private adopted: WarmPage | undefined;
  /** This render started from a warm page (no browser start, page load or ready wait). */
  warmStart = false;
  /** The page to give back to the pool at close(), with the next frame it can draw. */
  private kept: { session: CapturePage; nextFrame: number } | undefined;

  private constructor(
    readonly prepared: PreparedRender,
    readonly server: ProjectServer,
    readonly workDir: string,
    readonly ffmpegPath: string,
    private readonly browser: ResolvedBrowser,
    private readonly options: RenderRunOptions,
    private readonly key: string,
    warm: WarmPage | undefined,
  ) {
    this.adopted = warm;
    // Built while the browsers start (esbuild, once per process); each page awaits it.
    this.initScript = runtimeScript(
      options.purpose === "check"
        ? { variables: prepared.variables }
        : {
            variables: prepared.variables,
            aspect: { ratio: prepared.aspectRatio, ...prepared.viewport },
            ...(prepared.captions ? { captions: prepared.captions } : {}),
            fps: prepared.settings.fps,
          },
    );
    this.initScript.catch(() => undefined); // surfaced by the sessions that await it
    options.signal?.addEventListener("abort", this.onAbort, { once: true });
    if (options.signal?.aborted) this.onAbort();
  }

  /**
   * Finds FFmpeg and Chromium, makes the work dir and starts the project server. Only
   * withRenderRun calls this, and close(): it owns the run's start and end.
   */
  static async start(prepared: PreparedRender, options: RenderRunOptions): Promise<RenderRun> {
    const [ffmpeg, browser] = await Promise.all([
      // A check encodes nothing: its ffmpegPath stays empty.
      options.purpose === "check" ? undefined : resolveFfmpeg(),
      resolveChromium(),
    ]);
    if (options.signal?.aborted) throw cancelledError();
    const workDir = await mkdtemp(join(tmpdir(), "svc-render-"));
    const key = warmKey(prepared, options);
    const warm = options.pool?.take(key);
    try {
      const server = warm?.server ?? (await startProjectServer(prepared.root));
      return new RenderRun(
        prepared,
        server,
        workDir,
        ffmpeg?.path ?? "",
        browser,
        options,
        key,
        warm,
      );
    } catch (error) {
      await rm(workDir, { recursive: true, force: true });
      throw error;
    }
  }

  get allowNetwork(): NetworkAccess {
    return this.options.allowNetwork;
  }

  get cancelled(): boolean {
    return this.cancelledFlag;
  }

  throwIfCancelled(): void {
    if (this.cancelledFlag) throw cancelledError();
  }

  /**
   * A browser page on the composition, ready: the warm page this render adopted (first call), or
   * a new one, ready for frame 0.
   */
  async openCapturePage(): Promise<CapturePage> {
    const warm = this.adopted;
    if (warm) {
      this.adopted = undefined;
      this.warmStart = true;
      warm.hooks.pageError = (message) => this.pageErrors.push(message);
      warm.hooks.blocked = (url, reason) => this.refuse(url, reason);
      warm.hooks.library = (url, library) => this.libraries.set(url, library);
      this.sessions.push(warm.session);
      this.hooks.set(warm.session, warm.hooks);
      this.positions.set(warm.session, warm.nextFrame);
      return warm.session;
    }
    const session = await this.launchPage();
    await this.loadPage(session);
    return session;
  }

  /** A new browser page, not yet on the composition (a check loads it itself: loadPage). */
  async launchPage(): Promise<CapturePage> {
    const { prepared } = this;
    const hooks: PageHooks = {
      pageError: (message) => this.pageErrors.push(message),
      blocked: (url, reason) => this.refuse(url, reason),
      library: (url, library) => this.libraries.set(url, library),
    };
    const session = await CapturePage.open({
      browser: this.browser,
      viewport: prepared.viewport,
      deviceScaleFactor: prepared.deviceScaleFactor,
      transparent: prepared.transparent,
      imageFormat: prepared.imageFormat,
      jpegQuality: prepared.jpegQuality,
      initScript: this.initScript,
      projectOrigin: this.server.origin,
      allowNetwork: this.options.allowNetwork,
      onPageError: (message) => hooks.pageError(message),
      onBlockedRequest: (url, reason) => hooks.blocked(url, reason),
      // The operator's concern, not the creator's (the picture is the same): the process log.
      onWarning: (message) => process.emitWarning(message, { code: "SVC_BROWSER_RESTARTED" }),
      onLibrary: (url, library) => hooks.library(url, library),
      ...(this.options.extraArgs ? { extraArgs: this.options.extraArgs } : {}),
      ...(this.options.purpose === "check" ? { preferredMethod: "screenshot" as const } : {}),
    });
    this.sessions.push(session);
    this.hooks.set(session, hooks);
    if (this.cancelledFlag) throw cancelledError();
    return session;
  }

  /** Loads the composition in `session` and waits until the page runtime says it is ready. */
  async loadPage(session: CapturePage): Promise<void> {
    const readyTimeoutMs = this.options.readyTimeoutSeconds * 1000;
    await session.load(this.server.origin + this.prepared.urlPath, readyTimeoutMs);
    await waitUntilReady(session, readyTimeoutMs, this.pageErrors);
    if (this.options.purpose !== "check") await session.matchPageDetail();
  }

  /** A fresh page in place of `stale`, which closes: ready for frame 0. */
  async replacePage(stale: CapturePage): Promise<CapturePage> {
    const fresh = await this.openCapturePage();
    void stale.close();
    return fresh;
  }

  /** Opens `count` pages at once: launching and loading is mostly waiting, one process at a time. */
  openCapturePages(count: number): Promise<CapturePage>[] {
    const opening = Array.from({ length: count }, () => this.openCapturePage());
    for (const pending of opening) pending.catch(() => undefined); // awaited by the caller
    return opening;
  }

  /** The next frame `session` can draw without a catch-up (0 for a new page). */
  positionOf(session: CapturePage): number {
    return this.positions.get(session) ?? 0;
  }

  /**
   * Keeps `session` open after this render, at `nextFrame`, for a later render of the same page
   * (the pool given to start()); without a pool, or if the render fails, it closes as usual.
   */
  keepWarm(session: CapturePage, nextFrame: number): void {
    if (this.options.pool) this.kept = { session, nextFrame };
  }

  /** A new encoder, stopped with the render if it is cancelled or fails. */
  track<T extends FrameSink>(encoder: T): T {
    this.encoders.add(encoder);
    return encoder;
  }

  stopEncoder(encoder: FrameSink): void {
    this.encoders.delete(encoder);
    this.stopping.push(Promise.resolve(encoder.kill()));
  }

  /** Lets the browsers quit while later stages run (close() still waits for them). */
  closePages(): void {
    for (const session of this.sessions) void session.close();
  }

  /** The error to surface for `error`: cancellation and page errors win over their effects. */
  failure(error: unknown): unknown {
    if (this.cancelledFlag || this.options.signal?.aborted) {
      // A caller's own cancellation error (a check's words) stands.
      return error instanceof EngineError && error.code === "cancelled" ? error : cancelledError();
    }
    if (
      this.pageErrors.length > 0 &&
      !(error instanceof EngineError && error.code === "page_error")
    ) {
      return pageError(this.pageErrors);
    }
    return error;
  }

  /**
   * Stops everything this render started and removes its work dir; waits for every process. The
   * kept page (keepWarm) and its server go back to the pool instead, when the render succeeded.
   */
  async close(succeeded: boolean): Promise<void> {
    this.options.signal?.removeEventListener("abort", this.onAbort);
    for (const encoder of this.encoders) this.stopEncoder(encoder);
    const kept =
      succeeded && this.kept && !this.cancelledFlag && this.pageErrors.length === 0
        ? this.kept
        : undefined;
    const closing = this.sessions.filter((session) => session !== kept?.session);
    if (this.adopted) closing.push(this.adopted.session);
    await Promise.all([...this.stopping, ...closing.map((session) => session.close())]);
    if (kept && this.options.pool) {
      const hooks = this.hooks.get(kept.session)!;
      hooks.pageError = () => undefined;
      hooks.blocked = () => undefined;
      hooks.library = () => undefined;
      this.options.pool.give({
        key: this.key,
        server: this.server,
        session: kept.session,
        hooks,
        nextFrame: kept.nextFrame,
      });
    } else {
      await this.server.close();
    }
    await rm(this.workDir, { recursive: true, force: true });
    // A process that keeps a spare browser (a render worker) starts the next one now, if this
    // render took it: after the render, not while it needed the machine.
    refillSpareBrowser();
  }
}

export function pageError(messages: string[]): EngineError {
  return new EngineError(
    "page_error",
    `The composition's script threw: ${messages[0]}`,
    "Open the composition in a browser, fix the error shown in the console, and render again.",
    messages,
  );
}

/** What a warm page must share with a render to serve it: the page and how frames are drawn. */
function warmKey(prepared: PreparedRender, options: RenderRunOptions): string {
  return JSON.stringify({
    root: prepared.root,
    urlPath: prepared.urlPath,
    variables: prepared.variables,
    captions: prepared.captions,
    fps: prepared.settings.fps,
    size: prepared.size,
    viewport: prepared.viewport,
    aspectRatio: prepared.aspectRatio,
    scale: prepared.deviceScaleFactor,
    transparent: prepared.transparent,
    imageFormat: prepared.imageFormat,
    jpegQuality: prepared.jpegQuality,
    allowNetwork: options.allowNetwork,
    extraArgs: options.extraArgs ?? [],
  });
}

/** How often the page is asked whether it is ready (fonts, images, media) before the first frame. */
const READY_POLL_MS = 50;

export async function waitUntilReady(
  session: CapturePage,
  timeoutMs: number,
  pageErrors: string[],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (pageErrors.length > 0) throw pageError(pageErrors);
    const state = await session.evaluate<{
      ready: boolean;
      error?: string;
      waitingFor: string[];
    } | null>(
      "window.__svc ? { ready: !!window.__svc.ready, error: window.__svc.error, waitingFor: window.__svc.waitingFor || [] } : null",
    );
    if (state?.error) {
      throw new EngineError("page_error", state.error, "Fix the composition and render again.");
    }
    if (state?.ready) return;
    if (Date.now() > deadline) {
      const what = state?.waitingFor.length
        ? state.waitingFor.join(", ")
        : "the page runtime to start";
      throw new EngineError(
        "timeout",
        `Timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}.`,
        "Check that these files exist in the project and load in a browser, or raise the ready timeout.",
      );
    }
    await sleep(READY_POLL_MS);
  }
}
