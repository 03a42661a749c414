// The page's timing as the reference runtime resolves it, applied once when the scene is gathered:
// every `data-start` through start-resolver.ts (numbers on their composition's clock, or `intro +
// 0.5` after another element), and each nested composition host's span, data-playback-start (the
// child's clock reads that much at the host's start) and data-playback-rate (its timelines run that
// much faster; its clips and media keep rate 1, as in the reference). The scene, the player, chunks
// and the audio mix all take their times from here. Bad references become `svc check` findings.
import { numberAttr } from "./layout";
import { record } from "./diagnostics";
import { lookupTimeline } from "./timelines";
import { AUTHORED_ID_ATTR } from "./scope";
import { mediaStartOf, playbackRate } from "./video-time";
import { createStartResolver, type StartProblem, type StartResolver } from "./start-resolver";
import type { CompositionInstance } from "./types";

/** How long the reference shows an `<img data-start>` without a duration. */
const IMAGE_SECONDS = 3;

export interface PageTiming {
  /** Seconds on the root timeline where an element's data-start puts it. */
  start(element: Element): number;
}

/**
 * Resolves the page's starts and sets each nested instance's `start`, `offset` (its clock's 0),
 * `playbackStart` and `rate`. Problems are recorded as findings and added to `warnings`.
 */
export function applyTiming(
  root: CompositionInstance,
  instances: CompositionInstance[],
  warnings: string[],
): PageTiming {
  const byElement = new Map<Element, CompositionInstance>();
  for (const instance of instances) byElement.set(instance.element, instance);
  const enclosing = (element: Element | null): CompositionInstance | undefined => {
    for (let at = element; at; at = at.parentElement) {
      const owner = byElement.get(at);
      if (owner) return owner;
    }
    return undefined;
  };
  const clockElement = (element: Element): Element | undefined => {
    const owner = enclosing(element.parentElement);
    return owner && owner !== root ? owner.element : undefined;
  };
  const resolver: StartResolver<Element> = createStartResolver<Element>({
    startAttr: (element) =>
      byElement.get(element) === root ? null : element.getAttribute("data-start"),
    clockOf: clockElement,
    playbackStart: (element) => (byElement.has(element) ? mediaStartOf(element) : 0),
    find: (refId) => findReference(refId, byElement),
    duration: (element, start) => durationOf(element, start, byElement.get(element)),
    describe,
  });

  for (const instance of instances) {
    if (instance === root) continue;
    const start = resolver.start(instance.element);
    const playbackStart = mediaStartOf(instance.element);
    instance.start = start;
    instance.playbackStart = playbackStart;
    instance.offset = start - playbackStart;
    instance.rate = playbackRate(instance.element);
  }
  // Every other data-start in document order, as the reference's visibility pass asks: which
  // element of a reference loop gets the fallback depends on that order.
  for (const element of Array.from(document.querySelectorAll("[data-start]"))) {
    resolver.start(element);
  }
  for (const problem of resolver.problems()) {
    const message = problemMessage(problem);
    record({
      code: "bad-start-reference",
      severity: "warning",
      message,
      detail: `${problem.element} data-start="${problem.value}"`,
    });
    warnings.push(message);
  }
  return { start: (element) => resolver.start(element) };
}

/** Where instance time is at root time `t`: from its host's start, at its rate, from its offset. */
export function localTime(instance: CompositionInstance, t: number): number {
  if (instance.start === undefined) return Math.max(0, t - instance.offset);
  const elapsed = Math.max(0, t - instance.start);
  return (instance.playbackStart ?? 0) + elapsed * (instance.rate ?? 1);
}

/** Where the instance's span starts on the root timeline (its host's data-start). */
export function spanStart(instance: CompositionInstance): number {
  return instance.start ?? instance.offset;
}

/** The reference's lookup: an element id, else a composition id (a mounted file's root: its host). */
function findReference(
  refId: string,
  instances: Map<Element, CompositionInstance>,
): Element | undefined {
  const byId =
    document.getElementById(refId) ??
    document.querySelector(`[${AUTHORED_ID_ATTR}="${CSS.escape(refId)}"]`);
  const found =
    byId ?? document.querySelector(`[data-composition-id="${CSS.escape(refId)}"]`) ?? undefined;
  if (!found || instances.has(found)) return found ?? undefined;
  // The root element of a mounted file stands for its host, which carries the timing.
  const host = found.parentElement;
  if (found.hasAttribute("data-composition-id") && host && instances.has(host)) return host;
  return found;
}

/**
 * The reference's length of a referenced element: data-duration; else data-end past its start;
 * else a medium's own length from its data-media-start at its rate; else an image's 3 s; else the
 * timeline registered under its composition id.
 */
function durationOf(
  element: Element,
  start: number,
  instance: CompositionInstance | undefined,
): number | undefined {
  const positive = (value: number | undefined) =>
    value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
  const declared = strictNumber(element.getAttribute("data-duration"));
  if (declared !== undefined && declared > 0) return declared;
  const end = strictNumber(element.getAttribute("data-end"));
  if (end !== undefined && end > Math.max(0, start)) return end - Math.max(0, start);
  if (element instanceof HTMLMediaElement) {
    const length = element.duration;
    if (Number.isFinite(length)) {
      return positive(Math.max(0, length - mediaStartOf(element)) / playbackRate(element));
    }
  }
  if (element instanceof HTMLImageElement && element.hasAttribute("data-start")) {
    return IMAGE_SECONDS;
  }
  const id = element.getAttribute("data-composition-id");
  const timeline =
    (id ? lookupTimeline(window.__timelines, id) : undefined) ?? instance?.timelines[0];
  if (timeline) {
    try {
      return positive(Number(timeline.duration()));
    } catch {
      return undefined;
    }
  }
  return positive(instance?.declaredDuration ?? numberAttr(element, "data-duration"));
}

/** `Number()` of an attribute, as the reference reads timing numbers (no `1.5s`). */
function strictNumber(raw: string | null): number | undefined {
  if (raw === null || raw.trim() === "") return undefined;
  const value = Number(raw);
  return Number.isFinite(value) ? value : undefined;
}

function describe(element: Element): string {
  const tag = element.tagName.toLowerCase();
  const id = element.id || element.getAttribute(AUTHORED_ID_ATTR);
  if (id) return `${tag}#${id}`;
  const composition = element.getAttribute("data-composition-id");
  return composition ? `${tag}[data-composition-id="${composition}"]` : tag;
}

function problemMessage(problem: StartProblem): string {
  const where = `${problem.element} has data-start="${problem.value}"`;
  switch (problem.kind) {
    case "unknown-reference":
      return `${where}, but no element has that id or composition id, so it starts at 0. Name the id of the element it should follow (data-start="intro + 0.5" starts 0.5 s after #intro ends), or give a number of seconds.`;
    case "cycle":
      return `${where}, which comes back to itself through ${problem.loop!.join(" → ")}, so one of them starts at 0. Start one element of the chain at a number of seconds.`;
    case "unparsed":
      return `${where}, which is neither a number of seconds nor an id with an offset ("intro", "intro + 0.5", "intro - 1"), so it starts with its composition. Write seconds as a plain number, without a unit.`;
  }
}
