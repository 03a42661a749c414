// The Chromium command line of a capture session (capture.ts): the flags every automated,
// windowless browser needs, the base flags of the engine (browser.ts), the begin-frame flags of a
// headless-shell build, and raster tiles the size of the frame.
import { BASE_CHROMIUM_ARGS, sharedMemoryArgs } from "./browser";
import type { CaptureMethod, CapturePageOptions } from "./capture";

type CaptureArgsOptions = Pick<CapturePageOptions, "viewport" | "deviceScaleFactor" | "extraArgs">;

/**
 * Flags an automated, windowless browser needs: no throttling of a page nobody looks at, no
 * first-run or sign-in screens, sRGB output whatever the machine's display profile, and media
 * queries that describe a mouse (hover, fine pointer) on every machine. The set playwright-core
 * launched renders with before the engine drove the protocol itself (cdp.ts), so pictures stay
 * identical across that change.
 */
const AUTOMATION_ARGS = [
  "--disable-field-trial-config",
  "--disable-background-timer-throttling",
  "--disable-backgrounding-occluded-windows",
  "--disable-renderer-backgrounding",
  "--disable-back-forward-cache",
  "--disable-breakpad",
  "--disable-component-extensions-with-background-pages",
  "--disable-features=AvoidUnnecessaryBeforeUnloadCheckSync,DestroyProfileOnBrowserClose,HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,LensOverlay,MediaRouter,PaintHolding,ThirdPartyStoragePartitioning,OptimizationHints,NetworkTimeServiceQuerying",
  "--enable-features=CDPScreenshotNewSurface",
  "--allow-pre-commit-input",
  "--disable-hang-monitor",
  "--disable-ipc-flooding-protection",
  "--disable-popup-blocking",
  "--disable-prompt-on-repost",
  "--force-color-profile=srgb",
  "--metrics-recording-only",
  "--password-store=basic",
  "--use-mock-keychain",
  "--no-service-autorun",
  "--disable-search-engine-choice-screen",
  "--blink-settings=primaryHoverType=2,availableHoverTypes=2,primaryPointerType=4,availablePointerTypes=4",
  "--no-startup-window",
];

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
function rasterTileArgs(options: CaptureArgsOptions): string[] {
  const width = Math.ceil(options.viewport.width * options.deviceScaleFactor);
  const height = Math.ceil(options.viewport.height * options.deviceScaleFactor);
  return [`--default-tile-width=${width}`, `--default-tile-height=${height}`];
}

export function captureBrowserArgs(method: CaptureMethod, options: CaptureArgsOptions): string[] {
  return [
    ...AUTOMATION_ARGS,
    ...BASE_CHROMIUM_ARGS,
    ...sharedMemoryArgs(),
    ...(method === "beginframe" ? BEGIN_FRAME_ARGS : ["--headless"]),
    // A page made through the protocol (for begin-frame control) does not take the emulated
    // scale factor: the browser-wide one makes a 4k render a 4k capture, not 1080p scaled up.
    ...(method === "beginframe" && options.deviceScaleFactor !== 1
      ? [`--force-device-scale-factor=${options.deviceScaleFactor}`]
      : []),
    ...rasterTileArgs(options),
    ...(options.extraArgs ?? []),
  ];
}
