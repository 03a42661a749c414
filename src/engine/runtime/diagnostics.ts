// What the page does that svc may not render faithfully (issue 28, point 4), recorded as findings
// (src/shared/findings.ts) and read by the engine with `window.__svc.findings()`: a render lists
// them among its warnings, `svc check` prints them. Installed right after the runtime boots, before
// any page script, so it sees every load failure and every call.
//
// What counts, and why (docs/composition-format.md, "What svc warns about", says it to users):
// - Math.random(): svc does not seed it, so a picture built from it differs between renders, and
//   between the parallel workers of one render (a jump where one worker's part meets the next).
// - The clock (Date.now(), new Date(), performance.now()) read by page code while a frame is being
//   drawn. svc pins the clock to the frame's time, so a render is repeatable, but an animation
//   driven by the clock instead of a timeline keeps its own state: it does not follow a seek back
//   (the preview shows it wrong when scrubbed) and other renderers draw it differently. Reads while
//   the page starts (`const start = Date.now()`) are harmless and not reported; GSAP's own ticker
//   reads it every frame and is left out by its script's URL.
// - GSAP repeat: -1 outside every registered timeline (it runs on the clock, not the timeline), or
//   inside the timeline that gives the video its length when the root has no data-duration (the
//   video would never end: an error). Inside a registered timeline with a declared length it is
//   drawn exactly and not reported; so are CSS and WAAPI animations that repeat forever: svc sets
//   their time exactly on every frame.
// - No timeline registered for the root while GSAP is on the page: its tweens run on the clock.
// - A script, stylesheet, image, font or media file that fails to load (an error: the frame is
//   drawn without it).
// - A visible composition or clip element that is 0 px wide or tall and has nothing inside with a
//   size: it draws nothing while it is shown. Looked at once per quarter second of video time.
import type { Finding } from "../../shared/findings";
import { onClockRead, type ClockRead } from "./clock";
import type { SvcPage } from "./types";
import { isTimeline, registeredTimelines } from "./timelines";

declare module "./types" {
  interface SvcPage {
    /** What the page did so far that svc may not render faithfully. */
    findings?(): Finding[];
  }
}

/** Layout is looked at (zero-size elements, repeats) when a seek enters a new quarter second. */
const INSPECTIONS_PER_SECOND = 4;
/**
 * Stack traces taken to find who called Math.random() or read the clock, before giving up (GSAP
 * reads the clock every frame; a page may call Math.random() thousands of times while starting).
 */
const TRACE_BUDGET = 2000;
/** Descendants looked at to decide whether a zero-size element still draws something. */
const DESCENDANT_LIMIT = 500;
/**
 * Scripts whose clock reads are not the page's animation: GSAP's ticker, and d3's timer, which
 * d3 transitions run on (the reference's d3 contract: its virtual clock, as svc's, drives them).
 */
const CLOCK_LIBRARY = /gsap|greensock|\/d3(?:-timer|-transition)?(?:@|[./])/i;
/**
 * Animation libraries (the frame adapters', runtime/adapters.ts) whose Math.random() calls while
 * the page starts make ids (three.js's UUIDs, lottie-web's element ids), not pictures.
 */
const ID_RANDOM_LIBRARY = /\/(?:three|lottie-web|lottie|bodymovin|animejs|anime|d3)(?:@|[./-])/i;

const recorded = new Map<string, Finding>();

/** Keeps a finding for `svc check` and the render's warnings (one per code and detail). */
export function record(finding: Finding): void {
  const key = `${finding.code}\u0000${finding.detail ?? finding.message}`;
  if (!recorded.has(key)) recorded.set(key, finding);
}

/** A URL as a person would name it: a path in the project (from its root), or the whole URL. */
export function shortUrl(url: string): string {
  try {
    const parsed = new URL(url, location.href);
    return parsed.origin === location.origin ? parsed.pathname + parsed.search : parsed.href;
  } catch {
    return url;
  }
}

export type LoadKind = "script" | "stylesheet" | "image" | "font" | "video" | "audio";

/** A file the page needs that did not arrive (readiness.ts reports what it waited for too). */
export function recordLoadFailure(kind: LoadKind, url: string): void {
  const absolute = absoluteUrl(url);
  const name = shortUrl(absolute);
  const consequence: Record<LoadKind, string> = {
    script: "whatever it draws or animates is missing",
    stylesheet: "the page is drawn without its styles",
    image: "the frame is drawn without it",
    font: "its text is drawn in a fallback font",
    video: "the frame is drawn without it",
    audio: "the video is silent where it should play",
  };
  record({
    code: "load-failed",
    severity: "error",
    message: `The ${kind} ${name} could not be loaded, so ${consequence[kind]}. Check that the file exists at that path in the project (paths are relative to the page that uses them) and opens in a browser.`,
    detail: name,
  });
}

function recordFontFailure(face: FontFace): void {
  const family = face.family.replace(/^["']|["']$/g, "");
  const variant = [face.weight, face.style].filter((part) => part !== "normal").join(" ");
  const name = variant ? `"${family}" (${variant})` : `"${family}"`;
  record({
    code: "load-failed",
    severity: "error",
    message: `The font ${name} could not be loaded, so its text is drawn in a fallback font. Check the url() in its @font-face rule: the file must be in the project or reachable.`,
    detail: `font ${name}`,
  });
}

function absoluteUrl(url: string): string {
  try {
    return new URL(url, document.baseURI).href;
  } catch {
    return url;
  }
}

/** `div#intro.title` for an element, or `div[data-composition-id="x"]` for a composition. */
function describe(element: Element): string {
  const tag = element.tagName.toLowerCase();
  const id = element.id ? `#${element.id}` : "";
  const classes = Array.from(element.classList)
    .slice(0, 2)
    .map((name) => `.${name}`)
    .join("");
  const composition = element.getAttribute("data-composition-id");
  return `${tag}${id}${classes}${composition !== null && !id ? `[data-composition-id="${composition}"]` : ""}`;
}

// ---------------------------------------------------------------- who called

interface StackFrame {
  url: string;
  line: number;
}

function stackFrames(stack: string | undefined): StackFrame[] {
  const frames: StackFrame[] = [];
  for (const line of (stack ?? "").split("\n").slice(1)) {
    const match = /\(?([^\s()]+):(\d+):\d+\)?\s*$/.exec(line);
    if (match) frames.push({ url: match[1]!, line: Number(match[2]) });
  }
  return frames;
}

/** The script this module runs from: frames there are the runtime's, not the page's. */
const RUNTIME_URL = stackFrames(new Error().stack)[0]?.url;

/** Stack frames looked at: GSAP calls a timeline's callbacks a dozen frames below the seek. */
const STACK_DEPTH = 60;

interface Caller {
  /** The first frame outside the runtime (the page's code, or a library's). */
  frame: StackFrame | undefined;
  /**
   * The runtime called that code while drawing a frame: a seek, an rAF callback or timer run by
   * the virtual clock, a timeline's callback. Page code the browser runs by itself (a script as it
   * loads, an event listener, a fetch callback) is the page starting.
   */
  whileDrawing: boolean;
}

function caller(): Caller {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = STACK_DEPTH;
  const stack = new Error().stack;
  Error.stackTraceLimit = limit;
  const frames = stackFrames(stack);
  const first = frames.findIndex((frame) => frame.url !== RUNTIME_URL);
  if (first < 0) return { frame: undefined, whileDrawing: true };
  return {
    frame: frames[first],
    whileDrawing: frames.slice(first + 1).some((frame) => frame.url === RUNTIME_URL),
  };
}

function place(frame: StackFrame | undefined): string {
  return frame ? `${shortUrl(frame.url)}, line ${frame.line}` : "a page script";
}

// ---------------------------------------------------------------- install

export function installDiagnostics(page: SvcPage): void {
  let seeking = 0;

  document.addEventListener(
    "error",
    (event) => {
      const target = event.target;
      if (target instanceof HTMLScriptElement && target.src) {
        recordLoadFailure("script", target.src);
      } else if (target instanceof HTMLLinkElement && /\bstylesheet\b/i.test(target.rel)) {
        recordLoadFailure("stylesheet", target.href);
      } else if (target instanceof HTMLImageElement && target.getAttribute("src")) {
        recordLoadFailure("image", target.currentSrc || target.src);
      } else if (target instanceof HTMLMediaElement && target.getAttribute("src")) {
        recordLoadFailure(target instanceof HTMLVideoElement ? "video" : "audio", target.src);
      } else if (target instanceof HTMLSourceElement && target.parentElement) {
        const media = target.parentElement;
        if (media instanceof HTMLMediaElement) {
          recordLoadFailure(media instanceof HTMLVideoElement ? "video" : "audio", target.src);
        }
      }
    },
    true,
  );
  document.fonts.addEventListener("loadingerror", (event) => {
    for (const face of (event as FontFaceSetLoadEvent).fontfaces) recordFontFailure(face);
  });

  // Math.random: reported once while the page starts and once while frames are drawn.
  const realRandom = Math.random.bind(Math);
  const randomSeen = new Set<"start" | "drawing">();
  let randomTraces = 0;
  Math.random = function random(): number {
    if (randomSeen.size < 2 && randomTraces < TRACE_BUDGET) {
      randomTraces++;
      const from = caller();
      const phase = seeking > 0 || from.whileDrawing ? "drawing" : "start";
      const libraryIds =
        phase === "start" && !!from.frame && ID_RANDOM_LIBRARY.test(from.frame.url);
      if (!randomSeen.has(phase) && !libraryIds) {
        randomSeen.add(phase);
        const where = place(from.frame);
        record({
          code: "nondeterministic-random",
          severity: "warning",
          message:
            phase === "start"
              ? `Page code calls Math.random() while the page starts (${where}), so each render, each parallel worker of a render and the preview start from a different picture. Use fixed values or a seeded random generator.`
              : `Page code calls Math.random() while frames are drawn (${where}), so the picture changes from one render to the next and parallel workers disagree. Compute random values once, from a seeded generator, and animate them on the timeline.`,
          detail: `Math.random() ${phase === "start" ? "at start" : "while drawing"}: ${where}`,
        });
      }
    }
    return realRandom();
  };

  let clockTraces = 0;
  let clockReported = false;
  onClockRead((read: ClockRead) => {
    if (clockReported || clockTraces >= TRACE_BUDGET) return;
    clockTraces++;
    const from = caller();
    if (!(seeking > 0 || from.whileDrawing)) return;
    if (from.frame && CLOCK_LIBRARY.test(from.frame.url)) return;
    clockReported = true;
    const where = place(from.frame);
    record({
      code: "nondeterministic-clock",
      severity: "warning",
      message: `Page code reads the clock (${read}) while frames are drawn (${where}). svc makes the clock follow the video's time, so renders repeat exactly, but an animation driven by the clock instead of a timeline does not follow seeks (the preview shows it wrong when scrubbed) and other renderers draw it differently. Animate it on the registered GSAP timeline, or from the time the timeline gives you.`,
      detail: `${read}: ${where}`,
    });
  });

  // Layout and timelines are looked at after seeks, when the page is ready.
  const sizes = new ZeroSizeWatch();
  let rootChecked = false;
  let lastInspection = Number.NaN;
  const inspect = (t: number) => {
    if (!page.ready) return;
    const slot = Math.floor(t * INSPECTIONS_PER_SECOND);
    if (slot === lastInspection) return;
    lastInspection = slot;
    if (!rootChecked) {
      rootChecked = true;
      checkRootTimeline();
    }
    checkRepeats(page);
    checkFonts();
    sizes.look();
  };
  const seek = page.seek.bind(page);
  page.seek = (t: number): Promise<boolean> => {
    seeking++;
    return seek(t).finally(() => {
      seeking--;
      try {
        inspect(t);
      } catch (error) {
        console.error(`[svc] diagnostics failed: ${String(error)}`);
      }
    });
  };

  page.findings = () => {
    checkFonts();
    return [...recorded.values(), ...sizes.findings()];
  };
}

// ---------------------------------------------------------------- timelines

interface GsapAnimation {
  parent?: GsapAnimation;
  repeat?(): number;
  targets?(): unknown[];
  getChildren?(nested: boolean, tweens: boolean, timelines: boolean): GsapAnimation[];
}

interface GsapGlobal {
  globalTimeline?: GsapAnimation;
}

function gsapOnPage(): GsapGlobal | undefined {
  return (window as unknown as { gsap?: GsapGlobal }).gsap;
}

/**
 * Reported only when GSAP animations are running outside every registered timeline: a root that
 * only hosts nested compositions (each with its own timeline) needs none, and a tween that already
 * ended (a gsap.set() at start-up) is gone from GSAP's global timeline.
 */
function checkRootTimeline(): void {
  const global = gsapOnPage()?.globalTimeline;
  if (!global?.getChildren) return;
  const root = document.querySelector("[data-composition-id]");
  const rootId = root?.getAttribute("data-composition-id");
  if (!root || rootId === null || rootId === undefined) return;
  const registry = window.__timelines as unknown;
  let registered = false;
  if (Array.isArray(registry)) registered = registry.some(isTimeline);
  else if (registry && typeof registry === "object") {
    const entries = registry as Record<string, unknown>;
    const ids = new Set(
      Array.from(document.querySelectorAll("[data-composition-id]"), (element) =>
        element.getAttribute("data-composition-id"),
      ),
    );
    // A key naming no composition on the page is driven on the root's time (scene.ts).
    registered = Object.keys(entries).some(
      (key) => isTimeline(entries[key]) && (key === rootId || !ids.has(key)),
    );
  }
  if (registered) return;
  const seeked = new Set<unknown>(registeredTimelines());
  const free = global.getChildren(false, true, true).filter((animation) => !seeked.has(animation));
  if (free.length === 0) return;
  record({
    code: "no-root-timeline",
    severity: "warning",
    message: `No GSAP timeline is registered for the root composition "${rootId}", so svc cannot seek its GSAP animations: they run on the clock, and the preview and other renderers show them differently. Build them on one paused timeline and register it: window.__timelines["${rootId}"] = tl.`,
    detail: rootId,
  });
}

/** Reported at most this many times: one is enough to act on, a hundred is noise. */
const REPEAT_REPORTS = 5;
/** GSAP's length of something that repeats forever (10^10 s); anything near it means "never ends". */
const FOREVER_SECONDS = 1e9;
let repeatReports = 0;
const repeatSeen = new WeakSet<object>();

/**
 * `repeat: -1` matters in two cases. Inside a registered timeline it is drawn exactly (seeking a
 * repeat is arithmetic), unless the root has no data-duration: then the timeline's length, forever,
 * becomes the video's (an error). Outside every registered timeline it runs on GSAP's ticker, i.e.
 * on the clock, and does not follow seeks (a warning).
 */
function checkRepeats(page: SvcPage): void {
  const global = gsapOnPage()?.globalTimeline;
  if (!global?.getChildren || repeatReports >= REPEAT_REPORTS) return;
  const registered = new Set<unknown>(registeredTimelines());
  const endless = page.duration >= FOREVER_SECONDS;
  for (const animation of global.getChildren(true, true, true)) {
    if (repeatSeen.has(animation) || animation.repeat?.() !== -1) continue;
    const seeked = hasAncestorIn(animation, registered);
    if (seeked && !endless) continue;
    repeatSeen.add(animation);
    const target = animation.targets?.()[0];
    const what =
      target instanceof Element ? `A GSAP tween of ${describe(target)}` : "A GSAP animation";
    record(
      seeked
        ? {
            code: "infinite-repeat",
            severity: "error",
            message: `${what} repeats forever (repeat: -1) in the timeline that gives the video its length, and the root has no data-duration, so the video would never end. Set data-duration on the root element, or give the tween a repeat count that covers the video.`,
            detail: target instanceof Element ? describe(target) : "endless timeline",
          }
        : {
            code: "infinite-repeat",
            severity: "warning",
            message: `${what} repeats forever (repeat: -1) outside the registered timeline, so it runs on the clock instead of following the video's time: the preview shows it wrong when scrubbed, and other renderers draw it differently. Put it on the registered timeline with a repeat count that covers the video.`,
            detail: target instanceof Element ? describe(target) : `animation ${repeatReports + 1}`,
          },
    );
    if (++repeatReports >= REPEAT_REPORTS) return;
  }
}

function hasAncestorIn(animation: GsapAnimation, timelines: Set<unknown>): boolean {
  for (let at: GsapAnimation | undefined = animation; at; at = at.parent) {
    if (timelines.has(at)) return true;
  }
  return false;
}

function checkFonts(): void {
  document.fonts.forEach((face) => {
    if (face.status === "error") recordFontFailure(face);
  });
}

// ---------------------------------------------------------------- sizes

/**
 * Composition and clip elements seen shown with no size. An element counts as drawing nothing only
 * if that held at every look while it was shown: a clip that grows from 0 is fine.
 */
class ZeroSizeWatch {
  private readonly drawn = new WeakSet<Element>();
  private readonly empty = new Map<HTMLElement, { width: number; height: number }>();

  look(): void {
    const elements = document.querySelectorAll<HTMLElement>("[data-composition-id], .clip");
    for (const element of Array.from(elements)) {
      if (!(element instanceof HTMLElement) || this.drawn.has(element)) continue;
      if (element instanceof HTMLMediaElement) continue;
      // Outside its time (scene.ts hides it), or not rendered at all (display: none): not shown.
      if (element.closest("[data-svc-hidden]") || !element.checkVisibility()) continue;
      const width = element.offsetWidth;
      const height = element.offsetHeight;
      if ((width > 0 && height > 0) || drawsInside(element)) {
        this.drawn.add(element);
        this.empty.delete(element);
      } else {
        this.empty.set(element, { width, height });
      }
    }
  }

  findings(): Finding[] {
    const findings: Finding[] = [];
    for (const [element, size] of this.empty) {
      if (this.drawn.has(element)) continue;
      const composition = element.getAttribute("data-composition-id");
      const what =
        composition !== null
          ? `The composition "${composition}" (${describe(element)})`
          : `The clip ${describe(element)}`;
      findings.push({
        code: "zero-size",
        severity: "warning",
        message: `${what} is ${size.width}×${size.height} px and nothing inside it has a size, so it draws nothing while it is shown. Give it a width and a height (for a layer that fills the frame: position: absolute; inset: 0).`,
        detail: describe(element),
      });
    }
    return findings;
  }
}

function drawsInside(element: HTMLElement): boolean {
  const descendants = element.querySelectorAll("*");
  const count = Math.min(descendants.length, DESCENDANT_LIMIT);
  for (let i = 0; i < count; i++) {
    const rect = descendants[i]!.getBoundingClientRect();
    if (rect.width > 0 && rect.height > 0) return true;
  }
  return false;
}
