// A spare browser: started, with its blank page, before there is work for it, so the first render
// that needs one does not wait for a browser to start. A render worker asks for one when it starts
// (warmUp), before it claims any job, and after a render took it the next one starts when that
// render ends. Browser flags depend on the frame drawn (raster tiles, scale: capture-args.ts), so
// the first spare is for the usual frame (1920x1080 at scale 1); a render that needs other flags
// starts its own browser, as before, and the spare started after it is made like that one (a
// worker's next render is most likely one like its last).
import { runtimeBundle } from "../bundles/runtime-bundle";
import { resolveChromium, type ResolvedBrowser } from "./browser";
import { captureBrowserArgs } from "./capture-args";
import type { CaptureMethod } from "./capture";
import { CdpBrowser, type BrowserLaunch } from "./cdp";
import { confinementFor, UNSANDBOXED_ARGS } from "./confinement";
import type { NetworkAccess } from "./network";
import { resolveFfmpeg } from "../ffmpeg/ffmpeg";

/** The frame a spare browser is started for: most compositions are 1080p. */
const USUAL_FRAME = { viewport: { width: 1920, height: 1080 }, deviceScaleFactor: 1 };

/** A browser with one blank page made for capture (openPage), attached as `sessionId`. */
export interface ReadyBrowser {
  browser: CdpBrowser;
  sessionId: string;
}

interface Spare {
  key: string;
  ready: Promise<ReadyBrowser | undefined>;
}

/** The launch a spare is kept for, once warmUp asked for one (undefined: keep none). */
let wanted: { key: string; launch: BrowserLaunch; frame: Frame; method: CaptureMethod } | undefined;
let spare: Spare | undefined;

/** Spare browsers started and taken by a render in this process (tests and benches read these). */
export const spareBrowserCounts = { started: 0, taken: 0 };

type Frame = Parameters<typeof captureBrowserArgs>[1];

/**
 * The launch of a capture session's browser (capture.ts), for a spare and for a fresh start, and
 * its key: what makes two interchangeable (executable, flags, extra env, page size, method, and
 * whether the page may use the network: a page that may not gets a closed browser,
 * confinement.ts).
 */
export function captureLaunch(
  browser: ResolvedBrowser,
  method: CaptureMethod,
  frame: Frame,
  allowNetwork: NetworkAccess,
): { key: string; launch: BrowserLaunch } {
  const confinement = confinementFor(browser.executablePath, allowNetwork !== true);
  const args = [...captureBrowserArgs(method, frame), ...confinement.args].filter(
    (arg) => !confinement.sandbox || !UNSANDBOXED_ARGS.includes(arg),
  );
  const { prefix, uid, gid } = confinement;
  return {
    key: JSON.stringify([
      browser.executablePath,
      args,
      browser.env,
      frame.viewport,
      method,
      prefix,
    ]),
    launch: {
      executablePath: browser.executablePath,
      args,
      env: { ...process.env, ...browser.env },
      confinement: { prefix, ...(uid !== undefined && gid !== undefined ? { uid, gid } : {}) },
    },
  };
}

/**
 * Gets this process ready to render before any work arrives: finds the browser and FFmpeg, builds
 * the page runtime, and starts a spare browser for the usual frame (resolves once it answers), for
 * pages with the network access the renders will have (closed unless told).
 */
export async function warmUp(options: { allowNetwork?: NetworkAccess } = {}): Promise<void> {
  const [browser] = await Promise.all([resolveChromium(), resolveFfmpeg(), runtimeBundle()]);
  const method = browser.headlessShell ? "beginframe" : "screenshot";
  const launch = captureLaunch(browser, method, USUAL_FRAME, options.allowNetwork ?? false);
  wanted = { ...launch, frame: USUAL_FRAME, method };
  refillSpareBrowser();
  await spare?.ready;
}

/** A render started a browser of its own (no spare fitted): the next spare is made like it. */
export function startedOwnBrowser(
  key: string,
  launch: BrowserLaunch,
  frame: Frame,
  method: CaptureMethod,
): void {
  if (wanted) wanted = { key, launch, frame, method };
}

/** A blank page in `browser` for capture at `viewport` (begin-frame control for "beginframe"). */
export async function openPage(
  browser: CdpBrowser,
  viewport: Frame["viewport"],
  method: CaptureMethod,
): Promise<string> {
  const { targetId } = await browser.send<{ targetId: string }>("Target.createTarget", {
    url: "about:blank",
    width: viewport.width,
    height: viewport.height,
    ...(method === "beginframe" ? { enableBeginFrameControl: true } : {}),
  });
  const { sessionId } = await browser.send<{ sessionId: string }>("Target.attachToTarget", {
    targetId,
    flatten: true,
  });
  return sessionId;
}

/** Starts a spare browser if warmUp asked for one and none that fits is kept (after a render took it). */
export function refillSpareBrowser(): void {
  if (!wanted || spare?.key === wanted.key) return;
  // A spare made for other renders than this process now runs goes.
  void spare?.ready.then((ready) => ready?.browser.close());
  const { key, launch, frame, method } = wanted;
  spareBrowserCounts.started++;
  const ready = (async () => {
    const browser = await CdpBrowser.launch(launch);
    try {
      return { browser, sessionId: await openPage(browser, frame.viewport, method) };
    } catch (error) {
      await browser.close();
      throw error;
    }
  })();
  // A spare that failed to start is no spare: the render starts its own browser and reports why.
  spare = { key, ready: ready.catch(() => undefined) };
}

/** The spare browser, if one is kept for this launch key and still running; it is the caller's now. */
export async function takeSpareBrowser(key: string): Promise<ReadyBrowser | undefined> {
  if (spare?.key !== key) return undefined;
  const taken = spare;
  spare = undefined;
  const ready = await taken.ready;
  if (ready?.browser.running) {
    spareBrowserCounts.taken++;
    return ready;
  }
  await ready?.browser.close();
  return undefined;
}

/** Closes the spare browser and keeps none from now on (worker shutdown). */
export async function closeSpareBrowser(): Promise<void> {
  wanted = undefined;
  const taken = spare;
  spare = undefined;
  const ready = await taken?.ready;
  await ready?.browser.close();
}
