// The timelines a page registers for svc to seek (`window.__timelines`: an object by composition
// id, or an array), read the same way by the mounting of nested compositions, the scene and the
// diagnostics.
import type { TimelineLike } from "./types";

/** Every timeline in window.__timelines (an object by id, or an array). */
export function registeredTimelines(): TimelineLike[] {
  const registry = window.__timelines;
  if (!registry || typeof registry !== "object") return [];
  return Object.values(registry).filter(isTimeline);
}

export function lookupTimeline(
  registry: Window["__timelines"],
  id: string,
): TimelineLike | undefined {
  if (!registry || Array.isArray(registry)) return undefined;
  const candidate = registry[id];
  return isTimeline(candidate) ? candidate : undefined;
}

export function isTimeline(value: unknown): value is TimelineLike {
  return (
    !!value &&
    typeof value === "object" &&
    typeof (value as TimelineLike).duration === "function" &&
    (typeof (value as TimelineLike).seek === "function" ||
      typeof (value as TimelineLike).totalTime === "function")
  );
}

/** What a GSAP tween or timeline exposes that overlapInitFrames reads. */
interface GsapChild {
  startTime(): number;
  totalDuration(): number;
  timeScale(): number;
  targets?(): unknown[];
  parent?: GsapChild | null;
}

/**
 * The frames in [fromFrame, toFrame) at which stepping would first render a GSAP tween that starts
 * while another tween of one of its targets is still running. GSAP records a tween's start values
 * when it first renders, so such a tween records the other tween's value at that frame; a
 * timeline jumped forward renders the earlier tween at its end first and records the end value
 * instead (examples/gsap-heavy: a blob's scale tween starts 0.3 s before its intro ends, and a
 * chunk jumped past it drew the blob a fraction of a pixel larger until the tween ended). A jump
 * renders the timelines at these frames. `offset`: seconds on the root timeline where each
 * timeline's 0 is.
 */
export function overlapInitFrames(
  timelines: { timeline: TimelineLike; offset: number }[],
  fromFrame: number,
  toFrame: number,
  fps: number,
): number[] {
  interface Span {
    start: number;
    end: number;
    targets: unknown[];
  }
  const spans: Span[] = [];
  const byTarget = new Map<unknown, Span[]>();
  for (const { timeline, offset } of timelines) {
    for (const child of (timeline.getChildren?.(true, true, false) ?? []) as GsapChild[]) {
      if (typeof child.startTime !== "function" || typeof child.targets !== "function") continue;
      let start = child.startTime();
      let length = child.totalDuration() / (child.timeScale() || 1);
      // Into the registered timeline's time through any nested timelines.
      for (let parent = child.parent; parent && parent !== (timeline as unknown);) {
        const scale = parent.timeScale() || 1;
        start = parent.startTime() + start / scale;
        length /= scale;
        parent = parent.parent;
      }
      const span = {
        start: offset + start,
        end: offset + start + length,
        targets: child.targets(),
      };
      spans.push(span);
      for (const target of span.targets) {
        const list = byTarget.get(target);
        if (list) list.push(span);
        else byTarget.set(target, [span]);
      }
    }
  }
  const frames = new Set<number>();
  for (const span of spans) {
    // The first frame time at or after the start; on a boundary that float rounding could put
    // either side, the next frame too (rendering one more frame is what stepping does anyway).
    const exact = span.start * fps;
    const first = Math.ceil(exact - 1e-6);
    const candidates = Math.abs(exact - first) < 1e-6 ? [first, first + 1] : [first];
    for (const frame of candidates) {
      if (frame < fromFrame || frame >= toFrame) continue;
      const time = frame / fps;
      const overlaps = span.targets.some((target) =>
        byTarget
          .get(target)!
          .some((other) => other !== span && other.start < time && time < other.end),
      );
      if (overlaps) frames.add(frame);
    }
  }
  return [...frames].sort((a, b) => a - b);
}
