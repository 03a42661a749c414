// Render stage 2, browser sessions: what one render holds while it runs — the project server, its
// browser pages, its segment encoders and a temp work dir — and the one place that lets them all
// go. Cancelling (the render's AbortSignal) stops every encoder and closes every page at once;
// close() returns only when every FFmpeg and browser process has exited, so no process outlives
// the render, not even as an unreaped zombie. A page is "ready" when the page runtime says so
// (fonts, images, media), polled by waitUntilReady.
import type { CompositionInfo } from "./runtime/types";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { resolveChromium, type ResolvedBrowser } from "./browser";
import { CaptureSession } from "./capture";
import { EngineError } from "./errors";
import type { NetworkAccess } from "./network";
import { resolveFfmpeg } from "./ffmpeg";
import { startProjectServer, type ProjectServer } from "./project-server";
import type { PreparedRender } from "./render-prepare";
import { runtimeScript } from "./runtime-bundle";

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

export interface RenderSessionsOptions {
  allowNetwork: NetworkAccess;
  readyTimeoutSeconds: number;
  signal: AbortSignal | undefined;
  /** Extra Chromium flags, for experiments (bench/). */
  extraArgs?: string[];
}

export class RenderSessions {
  readonly pageErrors: string[] = [];
  /** URLs the network policy refused (findings). */
  readonly blocked = new Set<string>();
  /** Every page opened for this render, closed or not. */
  private readonly sessions: CaptureSession[] = [];
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

  private constructor(
    readonly prepared: PreparedRender,
    readonly server: ProjectServer,
    readonly workDir: string,
    readonly ffmpegPath: string,
    private readonly browser: ResolvedBrowser,
    private readonly options: RenderSessionsOptions,
  ) {
    // Built while the browsers start (esbuild, once per process); each page awaits it.
    this.initScript = runtimeScript({ variables: prepared.variables });
    this.initScript.catch(() => undefined); // surfaced by the sessions that await it
    options.signal?.addEventListener("abort", this.onAbort, { once: true });
    if (options.signal?.aborted) this.onAbort();
  }

  /** Finds FFmpeg and Chromium, makes the work dir and starts the project server. */
  static async start(
    prepared: PreparedRender,
    options: RenderSessionsOptions,
  ): Promise<RenderSessions> {
    const [ffmpeg, browser] = await Promise.all([resolveFfmpeg(), resolveChromium()]);
    if (options.signal?.aborted) throw cancelledError();
    const workDir = await mkdtemp(join(tmpdir(), "svc-render-"));
    try {
      const server = await startProjectServer(prepared.root);
      return new RenderSessions(prepared, server, workDir, ffmpeg.path, browser, options);
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

  /** Opens a browser page on the composition and waits until it is ready for frame 0. */
  async openSession(): Promise<CaptureSession> {
    const { prepared } = this;
    const session = await CaptureSession.open({
      browser: this.browser,
      viewport: { width: prepared.scan.width, height: prepared.scan.height },
      deviceScaleFactor: prepared.deviceScaleFactor,
      transparent: prepared.transparent,
      imageFormat: prepared.imageFormat,
      jpegQuality: prepared.jpegQuality,
      initScript: this.initScript,
      projectOrigin: this.server.origin,
      allowNetwork: this.options.allowNetwork,
      onPageError: (message) => this.pageErrors.push(message),
      onBlockedRequest: (url) => this.blocked.add(url),
      ...(this.options.extraArgs ? { extraArgs: this.options.extraArgs } : {}),
    });
    this.sessions.push(session);
    if (this.cancelledFlag) throw cancelledError();
    const readyTimeoutMs = this.options.readyTimeoutSeconds * 1000;
    await session.load(this.server.origin + prepared.urlPath, readyTimeoutMs);
    await waitUntilReady(session, readyTimeoutMs, this.pageErrors);
    await session.matchPageDetail();
    return session;
  }

  /** Opens `count` pages at once: launching and loading is mostly waiting, one process at a time. */
  openSessions(count: number): Promise<CaptureSession>[] {
    const opening = Array.from({ length: count }, () => this.openSession());
    for (const pending of opening) pending.catch(() => undefined); // awaited by the caller
    return opening;
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
    if (this.cancelledFlag || this.options.signal?.aborted) return cancelledError();
    if (
      this.pageErrors.length > 0 &&
      !(error instanceof EngineError && error.code === "page_error")
    ) {
      return pageError(this.pageErrors);
    }
    return error;
  }

  /** Stops everything this render started and removes its work dir; waits for every process. */
  async close(): Promise<void> {
    this.options.signal?.removeEventListener("abort", this.onAbort);
    for (const encoder of this.encoders) this.stopEncoder(encoder);
    await Promise.all([...this.stopping, ...this.sessions.map((session) => session.close())]);
    await this.server.close();
    await rm(this.workDir, { recursive: true, force: true });
  }
}

export function cancelledError(): EngineError {
  return new EngineError("cancelled", "The render was cancelled.", "Start the render again.");
}

export function pageError(messages: string[]): EngineError {
  return new EngineError(
    "page_error",
    `The composition's script threw: ${messages[0]}`,
    "Open the composition in a browser, fix the error shown in the console, and render again.",
    messages,
  );
}

/** How often the page is asked whether it is ready (fonts, images, media) before the first frame. */
const READY_POLL_MS = 50;

export async function waitUntilReady(
  session: CaptureSession,
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
