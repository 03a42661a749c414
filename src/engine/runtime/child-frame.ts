// An <iframe> of a composition runs on the composition's clock, as in the reference renderer
// (its virtual-time shim is served into every HTML file, and each seek also seeks the same-origin
// child frames). The engine's init script runs in every frame; in a frame whose parent runs the
// runtime, it installs only the virtual clock (Date, performance.now, rAF, timers) and a seek
// that the parent's scene calls on every frame: the clock moves to t and the frame's CSS and WAAPI
// animations are paused at their local time, those present at the first seek started at time 0,
// later ones when they first appear (the rule of the page's own animations, scene.ts).
import { installVirtualClock } from "./clock";

/** What a child frame offers its parent (`window.__svcChildFrame`). */
export interface ChildFrame {
  seek(t: number): void;
}

declare global {
  interface Window {
    __svcChildFrame?: ChildFrame;
  }
}

/** True in a frame whose parent is a page the runtime drives (same origin, `__svc` there). */
export function isChildOfRuntimePage(): boolean {
  if (window.parent === window) return false;
  try {
    return Boolean(window.parent.__svc || window.parent.__svcChildFrame);
  } catch {
    return false; // another origin: not a frame of the composition's own files
  }
}

export function installChildFrame(epochMs: number): ChildFrame {
  const clock = installVirtualClock(epochMs);
  const origins = new WeakMap<Animation, number>();
  let firstSeekDone = false;
  const frame: ChildFrame = {
    seek(t: number): void {
      clock.advanceTo(t * 1000);
      for (const animation of document.getAnimations()) {
        let origin = origins.get(animation);
        if (origin === undefined) {
          origin = firstSeekDone ? t : 0;
          origins.set(animation, origin);
        }
        if (animation.playState !== "paused") animation.pause();
        animation.currentTime = Math.max(0, t - origin) * 1000;
      }
      firstSeekDone = true;
      seekChildFrames(window, t);
    },
  };
  window.__svcChildFrame = frame;
  return frame;
}

/** Seeks every same-origin frame of `parent` that runs a child frame's runtime. */
export function seekChildFrames(parent: Window, t: number): void {
  for (let i = 0; i < parent.frames.length; i++) {
    try {
      parent.frames[i]?.__svcChildFrame?.seek(t);
    } catch {
      // another origin, or a frame being torn down: it keeps its own clock
    }
  }
}
