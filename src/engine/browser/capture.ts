// Frame capture from one browser. Two methods, picked per browser and kept with a fallback:
// - "beginframe": HeadlessExperimental.beginFrame on a headless-shell build. The compositor only
//   draws when we ask, so each screenshot shows exactly the seeked state, and it is the fastest
//   path measured here (see bench/render.ts).
// - "screenshot": Page.captureScreenshot, for full Chrome builds that lack beginFrame control.
import { setTimeout as sleep } from "node:timers/promises";
import type { ResolvedLibrary } from "../../node/index";
import { withTimeout } from "../../node/index";
import type { ResolvedBrowser } from "./browser";
import { browserCommandTimeoutMs, CdpBrowser } from "./cdp";
import { EngineError } from "../errors";
import type { FrameImageFormat } from "../ffmpeg/encode";
import {
  applyNetworkPolicy,
  networkClosed,
  watchRefusedAttempts,
  type NetworkAccess,
  type NetworkPolicy,
  type PolicyTarget,
} from "./network";
import { captureLaunch, openPage, startedOwnBrowser, takeSpareBrowser } from "./spare-browser";

export type CaptureMethod = "beginframe" | "screenshot";

/** Waits before asking for a screenshot again when the page has no frame to copy yet. */
const SCREENSHOT_RETRY_MS = [50, 100, 200, 400, 800];

/** Frames committed before the screenshot of a frame where a video moved (captureRaw). */
const VIDEO_COMMIT_FRAMES = 2;

/** Empty first frames tolerated before giving up (a visible video needs one more). */
const FIRST_FRAME_ATTEMPTS = 5;

/**
 * How long the blank page's first frame (the proof that begin-frame control works, at launch) may
 * take before the browser counts as stuck. It takes well under a second (3 s for the whole launch
 * at load 40 on 2 cores); a browser whose compositor lost its page's surface at start-up never
 * answers it ("Readback from surface failed", then silence: bench/fence-stall.ts), and waiting
 * the full command timeout (120 s) for that helps no one.
 */
const FIRST_FRAME_TIMEOUT_MS = 30_000;
/** Browsers started for one page when the first one's blank page never drew. */
const LAUNCH_ATTEMPTS = 3;

export interface CapturePageOptions {
  browser: ResolvedBrowser;
  /** Layout size of the composition in CSS pixels. */
  viewport: { width: number; height: number };
  /** Output pixels per CSS pixel (2 for 4k). */
  deviceScaleFactor: number;
  transparent: boolean;
  imageFormat: FrameImageFormat;
  jpegQuality: number;
  /** The page runtime, installed before any page script runs (may still be building). */
  initScript: string | Promise<string>;
  projectOrigin: string;
  allowNetwork: NetworkAccess;
  preferredMethod?: CaptureMethod;
  /** Extra Chromium flags (experiments in bench/). */
  extraArgs?: string[];
  onPageError: (message: string) => void;
  onBlockedRequest?: (url: string, reason?: string) => void;
  /** Something svc worked around that an operator should hear of (a browser started again). */
  onWarning?: (message: string) => void;
  /** A CDN URL answered with a library from npm (network.ts). */
  onLibrary?: (url: string, library: ResolvedLibrary) => void;
}

/** One captured frame: the picture, and whether it differs from the previous capture. */
export interface CapturedFrame {
  image: Buffer;
  changed: boolean;
}

export class CapturePage {
  private lastFrame: Buffer | undefined;
  private lastData: string | undefined;
  /** The previous capture was unchanged: the page is holding still. */
  private holding = false;
  /** The last seek moved a video to another frame (see captureRaw). */
  private videoMoved = false;
  /** JPEG quality of read-backs: the tier's, or 100 for a page with fine noise (matchPageDetail). */
  private jpegQuality: number;
  /** How long a beginFrame may go unanswered (undefined: the browser's command timeout). */
  private frameTimeoutMs: number | undefined;
  /** The page runs in a renderer process of its own (Chromium's sandbox on), not in the browser's. */
  private pageInOwnProcess = false;

  private constructor(
    private readonly browser: CdpBrowser,
    private readonly sessionId: string,
    readonly method: CaptureMethod,
    private readonly options: CapturePageOptions,
  ) {
    this.jpegQuality = options.jpegQuality;
  }

  static async open(options: CapturePageOptions): Promise<CapturePage> {
    const wantBeginFrame =
      options.browser.headlessShell && options.preferredMethod !== "screenshot";
    try {
      return await CapturePage.launch(options, wantBeginFrame ? "beginframe" : "screenshot");
    } catch (error) {
      if (!wantBeginFrame || error instanceof EngineError) throw error;
      // Some builds reject begin-frame control; the screenshot path works everywhere.
      return CapturePage.launch(options, "screenshot");
    }
  }

  /**
   * A browser whose blank page never draws its first frame is stuck for good (its compositor
   * lost the page's surface while starting); another browser started at once draws. The stall is
   * rare (bench/fence-stall.ts) and costs FIRST_FRAME_TIMEOUT_MS, never a failed render.
   */
  private static async launch(
    options: CapturePageOptions,
    method: CaptureMethod,
  ): Promise<CapturePage> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await CapturePage.launchOnce(options, method);
      } catch (error) {
        if (attempt >= LAUNCH_ATTEMPTS || !isFirstFrameStall(error)) throw error;
        options.onWarning?.(
          `A render's browser did not draw its first blank frame within ${Math.round(Math.min(FIRST_FRAME_TIMEOUT_MS, browserCommandTimeoutMs()) / 1000)} s and was started again (the picture is not affected; docs/security.md, issue 41).`,
        );
      }
    }
  }

  private static async launchOnce(
    options: CapturePageOptions,
    method: CaptureMethod,
  ): Promise<CapturePage> {
    const { key, launch } = captureLaunch(options.browser, method, options, options.allowNetwork);
    const spare = await takeSpareBrowser(key);
    if (!spare) startedOwnBrowser(key, launch, options, method);
    const browser = spare?.browser ?? (await CdpBrowser.launch(launch));
    try {
      const sessionId = spare?.sessionId ?? (await openPage(browser, options.viewport, method));
      const session = new CapturePage(browser, sessionId, method, options);
      session.pageInOwnProcess = !launch.args.includes("--single-process");
      await session.prepare();
      if (method === "beginframe") {
        // Proves the method works here, with a bound: see FIRST_FRAME_TIMEOUT_MS.
        session.frameTimeoutMs = Math.min(FIRST_FRAME_TIMEOUT_MS, browserCommandTimeoutMs());
        await session.captureRaw();
        session.frameTimeoutMs = undefined;
      }
      return session;
    } catch (error) {
      await browser.close();
      throw error;
    }
  }

  /** Page setup before the composition loads: errors, init script, size, network policy. */
  private async prepare(): Promise<void> {
    const { options } = this;
    this.on("Runtime.exceptionThrown", (params) =>
      options.onPageError(exceptionMessage(params.exceptionDetails as ExceptionDetails)),
    );
    const policy = {
      projectOrigin: options.projectOrigin,
      allowNetwork: options.allowNetwork,
      ...(options.onBlockedRequest ? { onBlocked: options.onBlockedRequest } : {}),
      ...(options.onLibrary ? { onLibrary: options.onLibrary } : {}),
    };
    await Promise.all([
      this.send("Page.enable"),
      this.send("Runtime.enable"),
      Promise.resolve(options.initScript).then((source) =>
        this.send("Page.addScriptToEvaluateOnNewDocument", { source }),
      ),
      this.send("Emulation.setDeviceMetricsOverride", {
        width: options.viewport.width,
        height: options.viewport.height,
        screenWidth: options.viewport.width,
        screenHeight: options.viewport.height,
        deviceScaleFactor: options.deviceScaleFactor,
        mobile: false,
      }),
      this.send("Emulation.setFocusEmulationEnabled", { enabled: true }),
      this.send("Emulation.setEmulatedMedia", {
        media: "",
        features: [{ name: "prefers-reduced-motion", value: "no-preference" }],
      }),
      options.transparent
        ? this.send("Emulation.setDefaultBackgroundColorOverride", {
            color: { r: 0, g: 0, b: 0, a: 0 },
          })
        : undefined,
      // Covers the page's dedicated workers too: their requests go through the page.
      applyNetworkPolicy(this.target(this.sessionId), policy),
      this.holdWorkersToPolicy(policy),
      networkClosed(options.allowNetwork) ? this.watchRefusedAttempts() : undefined,
    ]);
  }

  /**
   * A closed page's attempts that no request shows (WebSockets, WebRTC, DNS hints), in the page
   * and in its dedicated workers (each held until watched), become refused requests to warn of.
   */
  private async watchRefusedAttempts(): Promise<void> {
    const onBlocked = (url: string) => this.options.onBlockedRequest?.(url);
    const page = this.target(this.sessionId);
    page.on("Target.attachedToTarget", (params) => {
      const worker = this.target(params.sessionId as string);
      void watchRefusedAttempts(worker, onBlocked, false)
        .then(() => worker.send("Runtime.runIfWaitingForDebugger"))
        .catch(() => undefined);
    });
    await Promise.all([
      watchRefusedAttempts(page, onBlocked, true),
      page.send("Target.setAutoAttach", {
        autoAttach: true,
        waitForDebuggerOnStart: true,
        flatten: true,
        filter: [{ type: "worker" }],
      }),
    ]);
  }

  /**
   * Service and shared workers fetch outside the page, so each is attached as it starts, held
   * until the same network policy covers it, then let go.
   */
  private async holdWorkersToPolicy(policy: NetworkPolicy): Promise<void> {
    this.browser.on("Target.attachedToTarget", (params) => {
      const child = this.target(params.sessionId as string);
      // A worker the policy cannot cover stays held: it never runs, so it fetches nothing.
      void applyNetworkPolicy(child, policy)
        .then(() => child.send("Runtime.runIfWaitingForDebugger"))
        .catch(() => undefined);
    });
    await this.browser.send("Target.setAutoAttach", {
      autoAttach: true,
      waitForDebuggerOnStart: true,
      flatten: true,
      filter: [{ type: "service_worker" }, { type: "shared_worker" }],
    });
  }

  /** Navigates to the composition; readiness (images, fonts, media) is the runtime's to report. */
  async load(url: string, timeoutMs: number): Promise<void> {
    let loaded!: () => void;
    const domContentLoaded = new Promise<void>((resolve) => (loaded = resolve));
    this.on("Page.domContentEventFired", () => loaded());
    const navigation = async () => {
      const result = await this.send<{ errorText?: string }>("Page.navigate", { url });
      if (result.errorText) {
        throw new EngineError(
          "composition_not_found",
          `Could not load ${new URL(url).pathname}: ${result.errorText}.`,
          "Check that the entry file loads in a browser.",
        );
      }
      await domContentLoaded;
    };
    await withTimeout(
      navigation(),
      timeoutMs,
      () =>
        new EngineError(
          "timeout",
          `Timed out after ${Math.round(timeoutMs / 1000)} s loading ${new URL(url).pathname}.`,
          "Check that the entry file loads in a browser.",
        ),
    );
  }

  /** Runs an expression in the page and returns its JSON value; page exceptions become page_error. */
  /**
   * Reads frames back at JPEG quality 100 when the ready page draws SVG turbulence (`feTurbulence`:
   * paper grain, film grain). Its noise is one pixel fine over the whole frame, and JPEG 92 smooths
   * it away: catalog ink-bleed-reveal scored SSIM 0.953 against the reference at 92 and 0.988 at
   * 100 (the reference reads back at 100). Other pages keep 92: 100 costs ~20% more CPU a frame
   * (hello-world, 1080p30). Decided from the page itself, so every page of a render, and every
   * chunk of a distributed one, decides alike and renders stay identical.
   */
  async matchPageDetail(): Promise<void> {
    if (this.options.imageFormat !== "jpeg" || this.jpegQuality >= 100) return;
    const noisy = await this.evaluate<boolean>('document.querySelector("feTurbulence") !== null');
    if (noisy) this.jpegQuality = 100;
  }

  async evaluate<T>(expression: string): Promise<T> {
    const result = await this.send<{
      result: { value?: unknown };
      exceptionDetails?: ExceptionDetails;
    }>("Runtime.evaluate", {
      expression,
      awaitPromise: true,
      returnByValue: true,
    });
    if (result.exceptionDetails) {
      const description =
        result.exceptionDetails.exception?.description ?? result.exceptionDetails.text;
      throw new EngineError(
        "page_error",
        `The composition's script failed: ${description.split("\n")[0]}`,
        "Open the composition in a browser, fix the error shown in the console, and render again.",
      );
    }
    return result.result.value as T;
  }

  /**
   * Makes the next frame's raster independent of the frames drawn before it. Chromium's
   * compositor keeps state from earlier frames (a layer's tilings and raster scale, Skia's
   * caches), so a page that drew the whole video and one that jumped to a later frame can raster
   * the same state a few levels apart at edges (examples/gsap-heavy: 19 of 24 frames of a late
   * chunk, lowest SSIM 0.9986 read back, 0.9973 encoded). Called at every segment's first frame,
   * in whole renders and chunks alike, so a chunk (which starts on a segment) draws what a whole
   * render draws. Two resets, because the page may run in another process:
   * - A critical memory-pressure signal makes the compositor drop every tiling and raster scale
   *   and Skia drop its caches. The protocol sends it to the browser process only (Chromium's
   *   content/browser/devtools/protocol/memory_handler.cc), so it reaches the page's compositor
   *   only in a one-process browser.
   * - The page's content is skipped for one committed frame (`content-visibility: hidden` on the
   *   body): its composited layers leave the compositor and come back as new ones, with no
   *   tilings and no raster scale. This reaches a sandboxed page in its own process: hello-world
   *   with Chromium's sandbox, a late chunk's 8 of 8 frames differed from the whole render with
   *   the signal alone (SSIM 0.99896) and none with both. Only the body's inline style is touched,
   *   and put back as it was. Only where the signal cannot reach, and only on a page that has
   *   drawn frames before (a fresh page has no history to forget): at a video page's first frame
   *   the skipped content was what the screenshot showed (catalog heygen-avatar-promo-card, frame
   *   0 blank, 24.85% of pixels off the reference).
   */
  async forgetRasterHistory(): Promise<void> {
    await this.send("Memory.simulatePressureNotification", { level: "critical" });
    if (!this.pageInOwnProcess || this.lastFrame === undefined) return;
    const saved = await this.evaluate<[string, string] | null>(HIDE_CONTENT);
    if (saved === null) return;
    if (this.method === "beginframe") await this.send("HeadlessExperimental.beginFrame", {});
    else await this.evaluate(NEXT_RENDERING);
    await this.evaluate(`(${SHOW_CONTENT})(${JSON.stringify(saved)})`);
  }

  async seek(seconds: number): Promise<void> {
    this.videoMoved = await this.evaluate<boolean>(
      `window.__svc.seek(${seconds}).then((moved) => moved === true)`,
    );
  }

  /**
   * Captures the current state of the page as one encoded image. A frame is unchanged when the
   * compositor reports no damage, or, as a safety net, when the encoded image is byte for byte
   * the previous one (JPEG and PNG encoding are deterministic, so equal pixels give equal bytes).
   *
   * A beginFrame that asks for a screenshot always draws, reads back and encodes a full frame,
   * damage or not. So while the page holds still (the previous frame was unchanged) and
   * `skipUnchanged` is on, a frame is first committed without a screenshot: no damage means the
   * previous image is still exact and nothing is drawn; damage costs one more beginFrame, which
   * draws the committed frame for the screenshot. When the page is moving, the screenshot is
   * asked for at once, so animation pays nothing extra.
   */
  async capture(skipUnchanged = true): Promise<CapturedFrame> {
    // A video that moved or appeared reaches the compositor after the probe's commit, which then
    // reports no damage: the previous image was kept for its first two frames (bench video-window).
    const holding =
      skipUnchanged && this.holding && this.lastData !== undefined && !this.videoMoved;
    const data = await this.captureRaw(holding);
    const unchanged = data === undefined || data === this.lastData;
    if (skipUnchanged && unchanged && data !== undefined && this.method === "beginframe") {
      // A beginFrame that drew a screenshot leaves damage that the next one reports although
      // nothing changed; absorb it now, so the next frame's check sees only real changes.
      await this.send("HeadlessExperimental.beginFrame", {});
    }
    this.holding = unchanged;
    if (data !== undefined && data !== this.lastData) {
      this.lastData = data;
      this.lastFrame = Buffer.from(data, "base64");
      return { image: this.lastFrame, changed: true };
    }
    if (!this.lastFrame)
      throw new EngineError("capture_failed", "The browser produced no image for the first frame.");
    return { image: this.lastFrame, changed: false };
  }

  /**
   * The first image of a page whose first frame came back empty. A visible <video> is drawn from a
   * surface of its own that joins the compositor frame a frame late, and until it has, Chromium
   * draws nothing and returns no screenshot; the next frames have it. On a loaded machine a page
   * without video came back empty five times in a row too (chunk-jump.test, load 21: the page
   * had not committed its first frame yet), so after those the frame is asked for again a little
   * later, as the screenshot path does; the page's own timers follow the frame clock, so the wait
   * is ours.
   */
  private async firstImage(): Promise<string> {
    const attempts = FIRST_FRAME_ATTEMPTS + SCREENSHOT_RETRY_MS.length;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const image = await this.beginFrameWithScreenshot();
      if (image) return image;
      const wait = SCREENSHOT_RETRY_MS[attempt - FIRST_FRAME_ATTEMPTS];
      if (wait !== undefined) await sleep(wait);
    }
    throw new EngineError("capture_failed", "The browser produced no image for the first frame.");
  }

  /** One beginFrame that draws and reads the frame back; no image when nothing was drawn. */
  private async beginFrameWithScreenshot(
    format: FrameImageFormat = this.options.imageFormat,
  ): Promise<string | undefined> {
    const { jpegQuality } = this;
    const result = await this.send<{ screenshotData?: string }>("HeadlessExperimental.beginFrame", {
      screenshot: {
        format,
        ...(format === "jpeg" ? { quality: jpegQuality } : {}),
        optimizeForSpeed: true,
      },
    });
    return result.screenshotData || undefined;
  }

  /** The frame as base64 text straight from the protocol, or undefined when nothing changed. */
  private async captureRaw(probeFirst = false): Promise<string | undefined> {
    const { imageFormat: format } = this.options;
    const { jpegQuality } = this;
    if (this.method === "beginframe") {
      // A video that moved to another frame hands its picture to the compositor late, and until
      // it has, the screenshot shows the whole page as it was at the previous frame (catalog
      // heygen-avatar-promo-card: a belt of videos lagged a frame, on some renders and not
      // others). Frames committed without a screenshot first let it arrive: one was not always
      // enough on a loaded machine, two were in every run measured.
      // Its picture can also be dropped on the way, and then it never arrives: after the commits
      // the page asks for it again (SvcPage.presentVideos), and the screenshot draws it.
      if (this.videoMoved && !probeFirst) {
        for (let commit = 0; commit < VIDEO_COMMIT_FRAMES; commit++) {
          await this.send("HeadlessExperimental.beginFrame", {});
        }
        await this.evaluate("window.__svc.presentVideos()");
      }
      if (probeFirst) {
        const probe = await this.send<{ hasDamage: boolean }>("HeadlessExperimental.beginFrame");
        if (!probe.hasDamage) return undefined;
      }
      const image = await this.beginFrameWithScreenshot();
      if (!image && !this.lastFrame) return this.firstImage();
      // No damage since the last frame: no image, the previous one is still exact.
      return image;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await this.send<{ data: string }>("Page.captureScreenshot", {
          format,
          ...(format === "jpeg" ? { quality: jpegQuality } : {}),
          optimizeForSpeed: true,
          fromSurface: true,
          captureBeyondViewport: false,
        });
        return result.data;
      } catch (error) {
        // Chrome answers "Unable to capture screenshot" while the page has no frame to copy yet
        // (just after a load on a busy machine: seen in CI); it draws one on its own schedule,
        // so ask again a little later. The page's own timers follow the frame clock, so the
        // wait is ours.
        const retry = SCREENSHOT_RETRY_MS[attempt - 1];
        if (retry === undefined || !/Unable to capture screenshot/.test(String(error))) throw error;
        await sleep(retry);
      }
    }
  }

  /**
   * The page as it is now, as a lossless PNG (base64), outside the frame sequence: a scene of a
   * shader transition (capture/shader-frames.ts). The caller changed the page just before, so
   * the compositor has damage to draw.
   */
  async stillPng(): Promise<string> {
    if (this.method === "beginframe") {
      for (let attempt = 0; attempt < FIRST_FRAME_ATTEMPTS; attempt++) {
        const image = await this.beginFrameWithScreenshot("png");
        if (image) return image;
      }
      throw new EngineError("capture_failed", "The browser produced no image of a scene.");
    }
    const result = await this.send<{ data: string }>("Page.captureScreenshot", {
      format: "png",
      fromSurface: true,
      captureBeyondViewport: false,
    });
    return result.data;
  }

  /** Closes the browser and waits for its process; safe to call more than once. */
  close(): Promise<void> {
    return this.browser.close();
  }

  /** Stops the browser at once (cancellation). */
  kill(): void {
    this.browser.kill();
    void this.browser.close();
  }

  private send<T = Record<string, unknown>>(method: string, params: object = {}): Promise<T> {
    const timeoutMs =
      method === "HeadlessExperimental.beginFrame" ? this.frameTimeoutMs : undefined;
    return this.browser.send<T>(method, params, this.sessionId, timeoutMs);
  }

  private on(method: string, handler: (params: Record<string, unknown>) => void): void {
    this.browser.on(method, handler, this.sessionId);
  }

  private target(sessionId: string): PolicyTarget {
    return {
      send: (method, params) => this.browser.send(method, params, sessionId),
      on: (method, handler) => this.browser.on(method, handler, sessionId),
    };
  }
}

/** Skips the body's content (forgetRasterHistory); its inline value before, or null without a body. */
const HIDE_CONTENT = `(() => {
  const style = document.body?.style;
  if (!style) return null;
  const saved = [style.getPropertyValue("content-visibility"), style.getPropertyPriority("content-visibility")];
  style.setProperty("content-visibility", "hidden", "important");
  return saved;
})()`;

/** Puts the body's inline content-visibility back as HIDE_CONTENT found it. */
const SHOW_CONTENT = `([value, priority]) => {
  const style = document.body.style;
  if (value) style.setProperty("content-visibility", value, priority);
  else style.removeProperty("content-visibility");
}`;

/** Resolves once the page has been through a rendering update (a browser that draws on its own). */
const NEXT_RENDERING =
  "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))";

/** The blank page's first beginFrame got no answer (launchOnce). */
function isFirstFrameStall(error: unknown): boolean {
  return (
    error instanceof EngineError &&
    error.code === "timeout" &&
    error.params.command === "HeadlessExperimental.beginFrame"
  );
}

interface ExceptionDetails {
  text: string;
  exception?: { description?: string; value?: unknown };
}

/** "Cannot read properties of null" from a thrown TypeError, as a console shows it. */
function exceptionMessage(details: ExceptionDetails): string {
  const description = details.exception?.description;
  if (description) {
    const firstLine = description.split("\n")[0]!;
    return firstLine.replace(/^(?:[A-Z]\w*)?Error: /, "");
  }
  const value = details.exception?.value;
  return value !== undefined ? String(value) : details.text;
}
