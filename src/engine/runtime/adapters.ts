// Frame adapters: the animation libraries other than GSAP that a page may drive its picture with,
// seeked the way the reference runtime seeks them (heygen-com/hyperframes, its runtime/adapters
// and docs/concepts/frame-adapters.mdx), so a page written for it draws the same frame for a time.
// The virtual clock (clock.ts) already makes anything that animates from requestAnimationFrame,
// `performance.now` or timers follow the seek (three.js render loops, d3 transitions, anime.js
// and Lottie autoplay); the adapters add what the reference's contract promises on top:
// - anime.js: instances on `window.__hfAnime` (and, for anime 3, whatever `anime.running` holds)
//   are paused and seeked to the time in milliseconds;
// - Lottie (lottie-web, dotLottie players): animations from `lottie.getRegisteredAnimations()` and
//   `window.__hfLottie` are paused and moved to the frame for the time since their composition
//   started (looping when `loop` is set, held on the last frame otherwise);
// - three.js and typegpu: `window.__hfThreeTime` / `window.__hfTypegpuTime` hold the time, every
//   function on `window.__hfThreeRender` is called with it, then an `hf-seek` event
//   (`detail.time`, `detail.waitUntil(promise)`) goes to the window; the seek waits for the
//   promises handed to waitUntil;
// - video textures: when a seek moved a video, `hf-seek` goes out again once the video shows its
//   new frame, so a WebGL or WebGPU scene that uploads the video as a texture draws that frame;
// - loading: a seek waits while three.js's DefaultLoadingManager is still loading.
// Maps (Mapbox, MapLibre, Leaflet, Google Maps) need tiles from the network, which renders do not
// reach: not adapted. Errors a page's instance throws are the page's: reported, never fatal.
import type { VirtualClock } from "./clock";

/**
 * The longest a moved video's picture is waited for before hf-seek goes out again. The presented
 * frame usually comes within a few ms; 60 ms was too short on a loaded machine (CI at load 5: a
 * late chunk's texture held the previous picture, SSIM 0.966), and only pages that draw videos
 * as textures ever wait.
 */
const VIDEO_HANDOVER_MS = 400;

/** hf-seek listeners on the window (counted from before any page script, see countHfSeekListeners). */
let hfSeekListeners = 0;

/** Counts the page's hf-seek listeners, so a page without any pays nothing for video textures. */
export function countHfSeekListeners(): void {
  const add = window.addEventListener.bind(window);
  window.addEventListener = ((type: string, ...rest: unknown[]) => {
    if (type === "hf-seek") hfSeekListeners++;
    return (add as (type: string, ...args: unknown[]) => void)(type, ...rest);
  }) as typeof window.addEventListener;
}

/** The longest a seek waits for `hf-seek` waitUntil promises or three.js loaders. */
const PAGE_WAIT_TIMEOUT_MS = 10_000;

interface AnimeInstance {
  seek?(ms: number): unknown;
  pause?(): unknown;
}

interface LottieWebAnimation {
  goToAndStop(value: number, isFrame?: boolean): void;
  pause(): void;
  totalFrames: number;
  frameRate: number;
  loop?: boolean | number;
  wrapper?: Element | null;
  /** false until an animation loaded from `path` has its data. */
  isLoaded?: boolean;
  addEventListener?(name: string, callback: () => void): void;
}

interface DotLottiePlayer {
  pause(): void;
  setFrame?(frame: number): void;
  setCurrentRawFrameValue?(frame: number): void;
  seek?(percent: number): void;
  totalFrames?: number;
  duration?: number;
  frameRate?: number;
  loop?: boolean;
  canvas?: Element | null;
}

type LottieAnimation = LottieWebAnimation | DotLottiePlayer;

interface ThreeLoadingManager {
  itemsLoaded: number;
  itemsTotal: number;
}

/** What the adapters read and write on the page's window. */
interface AdapterWindow {
  anime?: { running?: unknown };
  lottie?: { getRegisteredAnimations?(): unknown };
  THREE?: { DefaultLoadingManager?: ThreeLoadingManager };
  __hfAnime?: AnimeInstance[];
  __hfLottie?: LottieAnimation[];
  __hfThreeRender?: unknown;
  __hfThreeTime?: number;
  __hfTypegpuTime?: number;
}

export interface HfSeekDetail {
  time: number;
  /** Holds the frame until `promise` settles; only during the event's dispatch. */
  waitUntil(promise: PromiseLike<unknown>): void;
}

export class FrameAdapters {
  private readonly win = window as unknown as AdapterWindow;
  private readonly pausedInstances = new WeakSet<object>();

  constructor(
    private readonly clock: VirtualClock,
    /** Seconds on the root timeline where the composition holding `element` starts. */
    private readonly startOf: (element: Element | null) => number,
  ) {}

  /**
   * Draws time `t` (seconds on the root timeline) with every adapted library; resolves when the
   * page's `hf-seek` work and three.js loaders are done.
   */
  async seek(t: number): Promise<void> {
    this.discover();
    this.seekAnime(t);
    const lottieLoads = this.lottieLoads();
    this.seekLottie(t);
    const waits = this.seekGpuScenes(t);
    const loading = this.threeLoading();
    if (loading) waits.push(loading);
    if (waits.length > 0) await this.settle(waits);
    if (lottieLoads.length > 0) {
      // An animation loaded from `path` (an XMLHttpRequest) has no frames until its data is in.
      await this.settle(lottieLoads);
      this.seekLottie(t);
    }
  }

  /**
   * Called when a seek moved videos and they show their new frames: a scene that uploads a video
   * as a texture on `hf-seek` draws it again with the frame for `t` (the reference re-seeks its
   * GPU scenes once video frames land).
   */
  async videosMoved(t: number, videos: HTMLVideoElement[]): Promise<void> {
    if (!this.hasGpuScenes()) return;
    // `seeked` comes before the media thread hands the decoded picture to the element's paint
    // source, which texImage2D and drawImage read: uploaded at once, the texture held the previous
    // frame in about one frame of three (a testsrc2 clip's timecode). A presented frame
    // (requestVideoFrameCallback) proves the hand-over; drawn frames are the engine's to begin, so
    // it may not come, and the wait is bounded.
    await Promise.all(
      videos.map(
        (video) =>
          new Promise<void>((resolve) => {
            const timer = this.clock.realSetTimeout(resolve, VIDEO_HANDOVER_MS);
            video.requestVideoFrameCallback?.(() => {
              this.clock.realClearTimeout(timer);
              resolve();
            });
          }),
      ),
    );
    const waits = this.seekGpuScenes(t);
    if (waits.length > 0) await this.settle(waits);
  }

  /** Whether the page draws on hf-seek or registered three.js render callbacks. */
  private hasGpuScenes(): boolean {
    const callbacks = this.win.__hfThreeRender;
    return (
      hfSeekListeners > 0 ||
      typeof callbacks === "function" ||
      (Array.isArray(callbacks) && callbacks.length > 0)
    );
  }

  /** Adds the instances the libraries know of to the registries, paused (the seek drives them). */
  private discover(): void {
    const win = this.win;
    try {
      const running = win.anime?.running;
      if (Array.isArray(running) && running.length > 0) {
        const list = (win.__hfAnime ??= []);
        for (const instance of running as AnimeInstance[]) {
          if (!list.includes(instance)) list.push(instance);
        }
      }
    } catch (error) {
      window.reportError(error);
    }
    try {
      const registered = win.lottie?.getRegisteredAnimations?.();
      if (Array.isArray(registered) && registered.length > 0) {
        const list = (win.__hfLottie ??= []);
        for (const animation of registered as LottieAnimation[]) {
          if (!list.includes(animation)) list.push(animation);
        }
      }
    } catch (error) {
      window.reportError(error);
    }
    for (const instance of [...arrayOf(win.__hfAnime), ...arrayOf(win.__hfLottie)]) {
      if (!instance || typeof instance !== "object" || this.pausedInstances.has(instance)) continue;
      this.pausedInstances.add(instance);
      try {
        (instance as { pause?(): unknown }).pause?.();
      } catch (error) {
        window.reportError(error);
      }
    }
  }

  /** anime.js: the root time in milliseconds, as the reference seeks it. */
  private seekAnime(t: number): void {
    const ms = t * 1000;
    for (const instance of arrayOf(this.win.__hfAnime)) {
      try {
        if (typeof instance?.seek === "function") instance.seek(ms);
      } catch (error) {
        window.reportError(error);
      }
    }
  }

  /** lottie-web animations whose data is still loading, as promises for their DOMLoaded. */
  private lottieLoads(): Promise<void>[] {
    const loads: Promise<void>[] = [];
    for (const animation of arrayOf(this.win.__hfLottie)) {
      if (!isLottieWeb(animation) || animation.isLoaded !== false) continue;
      if (typeof animation.addEventListener !== "function") continue;
      loads.push(
        new Promise<void>((resolve) => {
          animation.addEventListener!("DOMLoaded", () => resolve());
          animation.addEventListener!("data_failed", () => resolve());
        }),
      );
    }
    return loads;
  }

  /** Lottie: the frame for the time since the animation's composition started. */
  private seekLottie(t: number): void {
    for (const animation of arrayOf(this.win.__hfLottie)) {
      try {
        if (isLottieWeb(animation)) {
          const local = Math.max(0, t - this.startOf(animation.wrapper ?? null));
          const frame = local * animation.frameRate;
          const total = animation.totalFrames;
          if (total > 0 && animation.loop) animation.goToAndStop(wrap(frame, total), true);
          else if (total > 0 && frame >= total) animation.goToAndStop(total - 1, true);
          else animation.goToAndStop(local * 1000, false);
        } else if (isDotLottie(animation)) {
          seekDotLottie(animation, Math.max(0, t - this.startOf(animation.canvas ?? null)));
        }
      } catch (error) {
        window.reportError(error);
      }
    }
  }

  /** three.js and typegpu scenes: the time on the window, the render callbacks, `hf-seek`. */
  private seekGpuScenes(t: number): PromiseLike<unknown>[] {
    const win = this.win;
    win.__hfThreeTime = t;
    win.__hfTypegpuTime = t;
    const callbacks = win.__hfThreeRender;
    for (const callback of Array.isArray(callbacks) ? callbacks : [callbacks]) {
      if (typeof callback !== "function") continue;
      try {
        (callback as (time: number) => void)(t);
      } catch (error) {
        window.reportError(error);
      }
    }
    const waits: PromiseLike<unknown>[] = [];
    let dispatching = true;
    const detail: HfSeekDetail = {
      time: t,
      waitUntil: (promise) => {
        if (!dispatching) {
          throw new Error("hf-seek waitUntil() must be called while the event is dispatched");
        }
        waits.push(promise);
      },
    };
    try {
      window.dispatchEvent(new CustomEvent("hf-seek", { detail }));
    } finally {
      dispatching = false;
    }
    return waits;
  }

  /** A promise for three.js's loaders when they are still loading, else undefined. */
  private threeLoading(): Promise<void> | undefined {
    const manager = this.win.THREE?.DefaultLoadingManager;
    if (!manager || typeof manager.itemsTotal !== "number") return undefined;
    if (manager.itemsLoaded >= manager.itemsTotal) return undefined;
    return new Promise<void>((resolve) => {
      const check = () => {
        if (manager.itemsLoaded >= manager.itemsTotal) resolve();
        else this.clock.realSetTimeout(check, 10);
      };
      check();
    });
  }

  /** Waits for the page's promises, at most PAGE_WAIT_TIMEOUT_MS; a rejection is reported. */
  private async settle(waits: PromiseLike<unknown>[]): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = this.clock.realSetTimeout(resolve, PAGE_WAIT_TIMEOUT_MS);
    });
    const all = Promise.all(waits.map((wait) => Promise.resolve(wait))).then(
      () => undefined,
      (error: unknown) => window.reportError(error),
    );
    await Promise.race([all, timeout]);
    this.clock.realClearTimeout(timer);
  }
}

function arrayOf<T>(value: T[] | undefined): T[] {
  return Array.isArray(value) ? value : [];
}

/** `frame` folded into [0, total), with a frame a hair short of the end read as 0. */
function wrap(frame: number, total: number): number {
  const folded = frame % total;
  return total - folded < 1e-6 ? 0 : folded;
}

function isLottieWeb(value: unknown): value is LottieWebAnimation {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as LottieWebAnimation).goToAndStop === "function"
  );
}

function isDotLottie(value: unknown): value is DotLottiePlayer {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as DotLottiePlayer).pause === "function" &&
    ("totalFrames" in value || "duration" in value)
  );
}

function seekDotLottie(player: DotLottiePlayer, local: number): void {
  const total = player.totalFrames ?? 0;
  const loop = player.loop === true;
  if (typeof player.setFrame === "function") {
    const duration = player.duration ?? 0;
    if (!(total > 0) || !(duration > 0)) return;
    const frame = (local * total) / duration;
    player.setFrame(Math.min(loop ? wrap(frame, total) : frame, total - 1));
  } else if (typeof player.setCurrentRawFrameValue === "function") {
    const frame = local * (player.frameRate ?? 30);
    if (total > 0)
      player.setCurrentRawFrameValue(Math.min(loop ? wrap(frame, total) : frame, total - 1));
  } else if (typeof player.seek === "function") {
    const duration = player.duration ?? 0;
    if (duration > 0)
      player.seek(Math.min(100, ((loop ? local % duration : local) / duration) * 100));
  }
}
