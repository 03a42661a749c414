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
