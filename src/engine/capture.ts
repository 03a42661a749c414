// Frame capture from one browser. Two methods, picked per browser and kept with a fallback:
// - "beginframe": HeadlessExperimental.beginFrame on a headless-shell build. The compositor only
//   draws when we ask, so each screenshot shows exactly the seeked state, and it is the fastest
//   path measured here (see bench/render.ts).
// - "screenshot": Page.captureScreenshot, for full Chrome builds that lack beginFrame control.
import {
  chromium,
  type Browser,
  type BrowserContext,
  type CDPSession,
  type Page,
} from "playwright-core";
import { BASE_CHROMIUM_ARGS, sharedMemoryArgs, type ResolvedBrowser } from "./browser";
import { EngineError } from "./errors";
import type { FrameImageFormat } from "./encode";
import { applyNetworkPolicy } from "./network";

export type CaptureMethod = "beginframe" | "screenshot";

/**
 * Flags that make a headless-shell build draw only on HeadlessExperimental.beginFrame, in one
 * process: with --single-process and --no-zygote the renderer and the compositor run as threads
 * of the browser process, so a frame's pixels are not handed between processes through shared
 * memory, and closing the browser leaves no zygote or renderer behind to be re-parented (and left
 * unreaped where PID 1 does not reap, as in many containers): the one process is our child, and
 * we wait for it.
 */
const BEGIN_FRAME_ARGS = [
  "--single-process",
  "--no-zygote",
  "--headless=old",
  "--deterministic-mode",
  "--enable-begin-frame-control",
  "--disable-new-content-rendering-timeout",
  "--run-all-compositor-stages-before-draw",
  "--disable-threaded-animation",
  "--disable-threaded-scrolling",
  "--disable-checker-imaging",
  "--disable-image-animation-resync",
];

/**
 * One raster tile the size of the frame instead of Chromium's 256-pixel tiles. Without a GPU every
 * tile is rastered on its own, and a filter or shadow that spans tiles (a blurred glow, a
 * text-shadow) is computed again for each tile it touches: on bench/compositions/social-vertical
 * (two 700 px blurred blobs over a drifting photo) frame-sized tiles took 16% less CPU per frame,
 * and no composition measured took more (bench/README.md). Pixels move by rounding only (SSIM
 * 0.997-0.998 against 256-pixel tiles on the examples); every render uses the same tiles, so
 * renders stay identical to each other.
 */
function rasterTileArgs(options: CaptureSessionOptions): string[] {
  const width = Math.ceil(options.viewport.width * options.deviceScaleFactor);
  const height = Math.ceil(options.viewport.height * options.deviceScaleFactor);
  return [`--default-tile-width=${width}`, `--default-tile-height=${height}`];
}

export interface CaptureSessionOptions {
  browser: ResolvedBrowser;
  /** Layout size of the composition in CSS pixels. */
  viewport: { width: number; height: number };
  /** Output pixels per CSS pixel (2 for 4k). */
  deviceScaleFactor: number;
  transparent: boolean;
  imageFormat: FrameImageFormat;
  jpegQuality: number;
  initScript: string;
  projectOrigin: string;
  allowNetwork: boolean;
  preferredMethod?: CaptureMethod;
  /** Extra Chromium flags (experiments in bench/). */
  extraArgs?: string[];
  onPageError: (message: string) => void;
  onBlockedRequest?: (url: string) => void;
}

/** One captured frame: the picture, and whether it differs from the previous capture. */
export interface CapturedFrame {
  image: Buffer;
  changed: boolean;
}

export class CaptureSession {
  private lastFrame: Buffer | undefined;
  private lastData: string | undefined;
  /** The previous capture was unchanged: the page is holding still. */
  private holding = false;

  private constructor(
    private readonly browserProcess: Browser,
    readonly page: Page,
    private readonly cdp: CDPSession,
    readonly method: CaptureMethod,
    private readonly options: CaptureSessionOptions,
  ) {}

  static async open(options: CaptureSessionOptions): Promise<CaptureSession> {
    const wantBeginFrame =
      options.browser.headlessShell && options.preferredMethod !== "screenshot";
    try {
      return await CaptureSession.launch(options, wantBeginFrame ? "beginframe" : "screenshot");
    } catch (error) {
      if (!wantBeginFrame || error instanceof EngineError) throw error;
      // Some builds reject begin-frame control; the screenshot path works everywhere.
      return CaptureSession.launch(options, "screenshot");
    }
  }

  private static async launch(
    options: CaptureSessionOptions,
    method: CaptureMethod,
  ): Promise<CaptureSession> {
    const browser = await chromium.launch({
      executablePath: options.browser.executablePath,
      args: [
        ...BASE_CHROMIUM_ARGS,
        ...sharedMemoryArgs(),
        ...(method === "beginframe" ? BEGIN_FRAME_ARGS : []),
        // A page made through the protocol (for begin-frame control) does not take the context's
        // scale factor: the browser-wide one makes a 4k render a 4k capture, not 1080p scaled up.
        ...(method === "beginframe" && options.deviceScaleFactor !== 1
          ? [`--force-device-scale-factor=${options.deviceScaleFactor}`]
          : []),
        ...rasterTileArgs(options),
        ...(options.extraArgs ?? []),
      ],
      ignoreDefaultArgs: method === "beginframe" ? ["--headless"] : [],
      env: { ...process.env, ...options.browser.env },
    });
    try {
      const context = await browser.newContext({
        viewport: options.viewport,
        deviceScaleFactor: options.deviceScaleFactor,
        reducedMotion: "no-preference",
      });
      await applyNetworkPolicy(context, {
        projectOrigin: options.projectOrigin,
        allowNetwork: options.allowNetwork,
        ...(options.onBlockedRequest ? { onBlocked: options.onBlockedRequest } : {}),
      });
      await context.addInitScript({ content: options.initScript });
      const page =
        method === "beginframe"
          ? await newBeginFramePage(browser, context, options)
          : await context.newPage();
      page.on("pageerror", (error) => options.onPageError(error.message));
      const cdp = await context.newCDPSession(page);
      if (options.transparent) {
        await cdp.send("Emulation.setDefaultBackgroundColorOverride", {
          color: { r: 0, g: 0, b: 0, a: 0 },
        });
      }
      const session = new CaptureSession(browser, page, cdp, method, options);
      if (method === "beginframe") await session.captureRaw(); // proves the method works here
      return session;
    } catch (error) {
      await browser.close().catch(() => undefined);
      throw error;
    }
  }

  /** Navigates to the composition; readiness (images, fonts, media) is the runtime's to report. */
  async load(url: string, timeoutMs: number): Promise<void> {
    try {
      await this.page.goto(url, { waitUntil: "domcontentloaded", timeout: timeoutMs });
    } catch (error) {
      if (error instanceof Error && error.name === "TimeoutError") {
        throw new EngineError(
          "timeout",
          `Timed out after ${Math.round(timeoutMs / 1000)} s loading ${new URL(url).pathname}.`,
          "Check that the entry file loads in a browser.",
        );
      }
      throw error;
    }
  }

  /** Runs an expression in the page and returns its JSON value; page exceptions become page_error. */
  async evaluate<T>(expression: string): Promise<T> {
    const result = await this.cdp.send("Runtime.evaluate", {
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

  async seek(seconds: number): Promise<void> {
    await this.evaluate(`window.__svc.seek(${seconds})`);
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
    const holding = skipUnchanged && this.holding && this.lastData !== undefined;
    const data = await this.captureRaw(holding);
    const unchanged = data === undefined || data === this.lastData;
    if (skipUnchanged && unchanged && data !== undefined && this.method === "beginframe") {
      // A beginFrame that drew a screenshot leaves damage that the next one reports although
      // nothing changed; absorb it now, so the next frame's check sees only real changes.
      await this.cdp.send("HeadlessExperimental.beginFrame", {});
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

  /** The frame as base64 text straight from the protocol, or undefined when nothing changed. */
  private async captureRaw(probeFirst = false): Promise<string | undefined> {
    const { imageFormat, jpegQuality } = this.options;
    const format = imageFormat;
    if (this.method === "beginframe") {
      if (probeFirst) {
        const probe = await this.cdp.send("HeadlessExperimental.beginFrame", {});
        if (!probe.hasDamage) return undefined;
      }
      const result = await this.cdp.send("HeadlessExperimental.beginFrame", {
        screenshot: {
          format,
          ...(format === "jpeg" ? { quality: jpegQuality } : {}),
          optimizeForSpeed: true,
        },
      } as never);
      // No damage since the last frame: no image, the previous one is still exact.
      return (result as { screenshotData?: string }).screenshotData || undefined;
    }
    const result = await this.cdp.send("Page.captureScreenshot", {
      format,
      ...(format === "jpeg" ? { quality: jpegQuality } : {}),
      optimizeForSpeed: true,
      fromSurface: true,
      captureBeyondViewport: false,
    });
    return result.data;
  }

  private closing: Promise<void> | undefined;

  /** Closes the browser; safe to call more than once (cancellation and clean-up both do). */
  close(): Promise<void> {
    this.closing ??= this.browserProcess.close().catch(() => undefined);
    return this.closing;
  }

  /** Stops the browser at once (cancellation). */
  kill(): void {
    const process = this.browserProcess as unknown as {
      process?: () => { kill(signal: string): void } | null;
    };
    void this.browserProcess.close().catch(() => undefined);
    process.process?.()?.kill("SIGKILL");
  }
}

async function newBeginFramePage(
  browser: Browser,
  context: BrowserContext,
  options: CaptureSessionOptions,
): Promise<Page> {
  const browserSession = await browser.newBrowserCDPSession();
  const { browserContextIds } = await browserSession.send("Target.getBrowserContexts");
  const contextId = browserContextIds[browserContextIds.length - 1];
  const pagePromise = context.waitForEvent("page");
  await browserSession.send("Target.createTarget", {
    url: "about:blank",
    enableBeginFrameControl: true,
    ...(contextId ? { browserContextId: contextId } : {}),
    width: options.viewport.width,
    height: options.viewport.height,
  });
  const page = await pagePromise;
  await browserSession.detach();
  return page;
}
