// The seekable scene: everything time drives, gathered once when the page is ready so a seek is
// a walk over cached arrays (no querySelectorAll, no layout reads). Order inside a seek: clock
// (timers, rAF), GSAP timelines, the frame adapters (anime.js, Lottie, three.js/typegpu `hf-seek`),
// visibility of clips and media, video positions, then CSS/WAAPI animations last —
// `document.getAnimations()` brings style up to date once, after all writes. Once moved videos
// show their frames, `hf-seek` goes out again for scenes that use them as textures.
import { numberAttr } from "./layout";
import { isTimeline, overlapInitFrames } from "./timelines";
import { seekChildFrames } from "./child-frame";
import { FrameAdapters } from "./adapters";
import type { VirtualClock } from "./clock";
import { mediaStartOf, mediaTimeAt, naturalEnd, playbackRate } from "./video-time";
import { applyTiming, localTime, spanStart, type PageTiming } from "./timing";
import type { CompositionInstance, JumpResult, MediaSource, TimelineLike } from "./types";

const HIDDEN_ATTR = "data-svc-hidden";
/** A video inside its span: shown even where its own or an ancestor's visibility is hidden. */
const SHOWN_ATTR = "data-svc-video-shown";
/**
 * How the reference draws a video: as an image in its place that copies the video's box, fit,
 * border, radius, opacity, transforms, filters, masks and z-index, but not its shadow, outline or
 * background (the video itself is hidden). The image is positioned, so a video that is not gets
 * position: relative (see collect): it then paints in the same layer order as that image.
 */
const VIDEO_STYLE =
  `[${SHOWN_ATTR}]{visibility:visible!important}` +
  `video{box-shadow:none!important;outline:none!important;background:none!important}`;
/** A video that never reports `seeked` must not stall the render forever. */
const SEEKED_TIMEOUT_MS = 5000;
/** The reference runtime's re-render step around a seek (seekTimeline). */
const NUDGE_SECONDS = 0.001;

interface TimedElement {
  element: HTMLElement;
  /** Seconds on the root timeline. */
  start: number;
  end: number;
  hidden: boolean | undefined;
}

interface MediaEntry extends TimedElement {
  element: HTMLMediaElement;
  owner: CompositionInstance;
  mediaStart: number;
  declaredDuration: number | undefined;
  volume: number;
  controlsVisibility: boolean;
  /** data-playback-rate (videos). */
  rate: number;
  /** Videos: the nested composition hosts around it; a hidden one hides the video too. */
  hosts: HTMLElement[];
}

interface TimelineEntry {
  timeline: TimelineLike;
  instance: CompositionInstance;
}

export class Scene {
  private readonly byElement = new Map<Element, CompositionInstance>();
  private readonly timed: TimedElement[] = [];
  private readonly media: MediaEntry[] = [];
  private readonly videos: MediaEntry[] = [];
  private readonly paused = new WeakSet<object>();
  private readonly animationOrigins = new WeakMap<Animation, number>();
  private initialScanDone = false;
  private previousSeek = 0;
  /** The next seek follows a jump: animations it finds first may have started in skipped frames. */
  private afterJump = false;
  private jumpProblems: string[] = [];
  /** Videos the last seek moved to another frame (presentMovedVideos). */
  private moved: HTMLVideoElement[] = [];
  /** anime.js, Lottie, three.js, typegpu and video textures (adapters.ts). */
  private readonly adapters: FrameAdapters;
  /** Resolved data-start times (relative starts, nested hosts' playback start and rate). */
  private readonly timing: PageTiming;

  constructor(
    private readonly root: CompositionInstance,
    private readonly instances: CompositionInstance[],
    private readonly clock: VirtualClock,
    private readonly warnings: string[],
    /** The render's frame rate: videos show the picture the reference extracts for each frame. */
    private readonly fps: number | undefined = undefined,
  ) {
    for (const instance of instances) this.byElement.set(instance.element, instance);
    this.timing = applyTiming(root, instances, warnings);
    this.adapters = new FrameAdapters(clock, (element) => this.ownerOf(element).offset);
    this.collect();
    // Tweens that are not in a paused timeline run on GSAP's ticker (our virtual rAF). Without lag
    // smoothing a jump of several seconds (a parallel worker's first frame) advances them fully.
    const gsap = (window as unknown as { gsap?: { ticker?: { lagSmoothing?(n: number): void } } })
      .gsap;
    gsap?.ticker?.lagSmoothing?.(0);
  }

  /** The instance an element belongs to: its nearest composition element, else the root. */
  ownerOf(element: Element | null): CompositionInstance {
    for (let at = element; at; at = at.parentElement) {
      const owner = this.byElement.get(at);
      if (owner) return owner;
    }
    return this.root;
  }

  private collect(): void {
    const style = document.createElement("style");
    style.textContent = `[${HIDDEN_ATTR}]{visibility:hidden!important}${VIDEO_STYLE}`;
    document.head.append(style);

    for (const instance of this.instances) {
      if (instance === this.root) continue;
      const start = spanStart(instance);
      const end =
        instance.declaredDuration === undefined ? Infinity : start + instance.declaredDuration;
      this.timed.push({
        element: instance.element,
        start,
        end,
        hidden: undefined,
      });
    }
    for (const element of Array.from(document.querySelectorAll<HTMLElement>(".clip[data-start]"))) {
      if (this.byElement.has(element) || element instanceof HTMLMediaElement) continue;
      const start = this.timing.start(element);
      const duration = numberAttr(element, "data-duration");
      const end = duration === undefined ? Infinity : start + duration;
      this.timed.push({ element, start, end, hidden: undefined });
    }
    for (const element of Array.from(document.querySelectorAll<HTMLMediaElement>("video, audio"))) {
      const owner = this.ownerOf(element.parentElement);
      const start = this.timing.start(element);
      const isVideo = element instanceof HTMLVideoElement;
      const declaredEnd = numberAttr(element, "data-end");
      let declaredDuration = numberAttr(element, "data-duration");
      if (declaredDuration === undefined && declaredEnd !== undefined) {
        declaredDuration = Math.max(0, owner.offset + declaredEnd - start);
      }
      const mediaStart = isVideo
        ? mediaStartOf(element)
        : (numberAttr(element, "data-media-start") ?? 0);
      const rate = isVideo ? playbackRate(element) : 1;
      let end = Infinity;
      if (declaredDuration !== undefined) end = start + declaredDuration;
      else end = naturalEnd({ start, mediaStart, rate, loop: element.loop }, element.duration);
      const volume = element.hasAttribute("muted")
        ? 0
        : Math.max(0, numberAttr(element, "data-volume") ?? 1);
      const entry: MediaEntry = {
        element,
        owner,
        start,
        end,
        hidden: undefined,
        mediaStart,
        declaredDuration,
        volume,
        controlsVisibility: element.hasAttribute("data-start"),
        rate,
        hosts: [],
      };
      this.media.push(entry);
      // The page never plays media: video frames are seeked, audio is mixed by the encoder.
      element.pause();
      element.muted = true;
      element.addEventListener("play", () => element.pause());
      if (isVideo) {
        for (let at = element.parentElement; at; at = at.parentElement) {
          if (at.hasAttribute("data-composition-src") || at.hasAttribute("data-composition-file")) {
            entry.hosts.push(at);
          }
        }
        // Layout is final here (the page is ready); an in-flow video is not moved by this.
        if (getComputedStyle(element).position === "static") {
          element.style.position = "relative";
          element.style.inset = "auto";
        }
        this.videos.push(entry);
      }
    }
  }

  /** Timelines to drive: captured per instance, then the registry (object by id, or array). */
  private timelines(): TimelineEntry[] {
    const entries: TimelineEntry[] = [];
    const seen = new Set<TimelineLike>();
    const add = (timeline: TimelineLike, instance: CompositionInstance) => {
      if (seen.has(timeline)) return;
      seen.add(timeline);
      entries.push({ timeline, instance });
    };
    for (const instance of this.instances) {
      for (const timeline of instance.timelines) add(timeline, instance);
    }
    // The rest of the registry: keyed by a composition id, or root-level (array entries, or keys
    // that name no instance).
    const registry = window.__timelines as Record<string, unknown> | undefined;
    if (registry && typeof registry === "object") {
      for (const key of Object.keys(registry)) {
        const timeline = registry[key];
        if (!isTimeline(timeline) || seen.has(timeline)) continue;
        add(timeline, this.instances.find((instance) => instance.id === key) ?? this.root);
      }
    }
    return entries;
  }

  /**
   * data-duration of the root; without it, where the last thing ends, as the reference infers it:
   * the longest timeline (a nested one from its start), the last clip, nested composition or
   * media element with a known end.
   */
  duration(): number | undefined {
    const declared = numberAttr(this.root.element, "data-duration");
    if (declared !== undefined && declared > 0) return declared;
    let longest: number | undefined;
    const consider = (end: number) => {
      if (Number.isFinite(end) && end > 0) longest = Math.max(longest ?? 0, end);
    };
    for (const entry of this.timelines()) {
      const instance = entry.instance;
      const length = entry.timeline.duration();
      if (instance === this.root) consider(length);
      else if (instance.declaredDuration === undefined) {
        const rate = instance.rate ?? 1;
        consider(spanStart(instance) + (length - (instance.playbackStart ?? 0)) / rate);
      }
    }
    for (const item of this.timed) consider(item.end);
    for (const item of this.media) consider(item.end);
    return longest;
  }

  private seekTimelines(t: number): void {
    for (const { timeline, instance } of this.timelines()) {
      if (!this.paused.has(timeline)) {
        this.paused.add(timeline);
        timeline.paused?.(true);
      }
      const local = instance === this.root ? Math.max(0, t) : localTime(instance, t);
      try {
        seekTimeline(timeline, local);
      } catch (error) {
        // A throwing onUpdate/call() is the page's error: report it, keep the frame consistent.
        window.reportError(error);
      }
    }
  }

  /** Draws time `t`; true when a video had to move to another frame or appeared. */
  async seek(t: number): Promise<boolean> {
    this.clock.advanceTo(t * 1000);

    this.seekTimelines(t);
    const adapted = this.adapters.seek(t);

    for (const item of this.timed) setHidden(item, !(item.start <= t && t < item.end));

    const seeks: Promise<void>[] = [];
    this.moved = [];
    for (const entry of this.media) {
      if (!(entry.element instanceof HTMLVideoElement)) {
        if (entry.controlsVisibility) setHidden(entry, !(entry.start <= t && t < entry.end));
        continue;
      }
      const video = entry.element;
      // The reference draws a video's picture from its start to its end (excluded: measured, bench
      // video-window), over the video's own visibility and that of any ancestor but a hidden
      // nested composition host.
      const inside = !entry.controlsVisibility || (entry.start <= t && t < entry.end);
      const shown = inside && !entry.hosts.some((host) => host.hasAttribute(HIDDEN_ATTR));
      // A video that appears joins the compositor frame late, as a moved one does: without the
      // moved-video handling its first two frames came out without it (bench video-window).
      const appeared = shown && entry.hidden !== false && !video.error;
      setHidden(entry, !shown);
      if (shown) video.setAttribute(SHOWN_ATTR, "");
      else video.removeAttribute(SHOWN_ATTR);
      // A video that failed to load (readiness warned) never seeks: waiting for it would cost
      // SEEKED_TIMEOUT_MS on every frame (an unfilled template's src: 3 s a frame).
      if (video.error) continue;
      const target = mediaTimeAt(
        { start: entry.start, mediaStart: entry.mediaStart, rate: entry.rate, loop: video.loop },
        t,
        video.duration,
        this.fps,
      );
      if (Math.abs(video.currentTime - target) > 0.0005) {
        seeks.push(this.seekVideo(video, target));
        this.moved.push(video);
      } else if (appeared) {
        this.moved.push(video);
      }
    }

    this.seekAnimations(t);
    seekChildFrames(window, t);
    await adapted;
    if (seeks.length > 0) {
      await Promise.all(seeks);
      await this.adapters.videosMoved(t, this.moved);
    }
    return this.moved.length > 0;
  }

  /**
   * A jump (SvcPage.jump): the clock steps through every frame time from `fromFrame` to
   * `toFrame` (timers and rAF callbacks run as they do when every frame is drawn, so page code
   * driven by them keeps the same state), while timelines, clips, videos and CSS/WAAPI animations
   * wait for the next seek, which sets them straight from the time (a paused GSAP timeline jumped
   * forward renders the tweens it passes in order, so recorded start values come out the same;
   * where a tween starts while another tween of its targets runs, the timelines are also rendered
   * at that frame, see overlapInitFrames).
   * That skips the costly part of a frame (timeline renders, style updates). Refused when GSAP
   * onUpdate/onRepeat callbacks are on a seeked timeline: they run on every stepped frame and may
   * keep count, which a jump cannot reproduce.
   */
  async jump(fromFrame: number, toFrame: number, fps: number): Promise<JumpResult> {
    const reasons = this.statefulCallbacks();
    if (reasons.length > 0) return { jumped: false, reasons };
    const timelines = this.timelines().map(({ timeline, instance }) => ({
      timeline,
      offset: instance.offset,
    }));
    const initFrames = new Set(overlapInitFrames(timelines, fromFrame, toFrame, fps));
    for (let frame = fromFrame; frame < toFrame; frame++) {
      this.clock.advanceTo((frame / fps) * 1000);
      // A tween that starts while another of its targets' tweens runs records that one's value.
      if (initFrames.has(frame)) this.seekTimelines(frame / fps);
      // Promise callbacks that page code chained from a frame run before the next one.
      await Promise.resolve();
    }
    this.afterJump = true;
    return { jumped: true, reasons: [] };
  }

  /**
   * A paused video's new picture goes to the compositor once, when the seek decodes it, and
   * Chromium drops that hand-over when the compositor has not yet acknowledged the previous one
   * (VideoFrameSubmitter::SubmitFrame, while `waiting_for_compositor_ack_`); nothing hands it over
   * again, so every later screenshot shows the previous picture. Under load that happened one
   * render in 30-60 (a chunk's video a frame behind from some frame to the end), and two seeks
   * with no frame drawn between them do it every time. Asking for a video frame callback makes
   * Chromium hand the current picture over again (SetForceBeginFrames -> UpdateSubmissionState
   * -> SubmitSingleFrame: a no-op when that picture was already handed over), and keeps the
   * video's compositor frame sink in step with drawn frames, so the engine calls this after the
   * frames it commits for a moved video (by then the acknowledgement has come back), and the
   * screenshot that follows draws the new picture.
   */
  presentMovedVideos(): void {
    for (const video of this.moved) {
      if (typeof video.requestVideoFrameCallback === "function") {
        video.requestVideoFrameCallback(() => undefined);
      }
    }
  }

  takeJumpProblems(): string[] {
    const problems = this.jumpProblems;
    this.jumpProblems = [];
    return problems;
  }

  /** GSAP callbacks that run on every rendered frame, on the timelines a seek drives. */
  private statefulCallbacks(): string[] {
    for (const { timeline } of this.timelines()) {
      const all = [timeline, ...(timeline.getChildren?.(true, true, true) ?? [])];
      for (const item of all) {
        const vars = (item as { vars?: Record<string, unknown> }).vars;
        for (const name of ["onUpdate", "onRepeat"]) {
          if (typeof vars?.[name] === "function") {
            return [
              `a GSAP ${name} callback runs on every frame and may keep state between frames`,
            ];
          }
        }
      }
    }
    return [];
  }

  /** CSS animations, CSS transitions and WAAPI animations, paused at their local time. */
  private seekAnimations(t: number): void {
    const animations = document.getAnimations();
    for (const animation of animations) {
      let origin = this.animationOrigins.get(animation);
      if (origin === undefined) {
        const target = (animation.effect as KeyframeEffect | null)?.target ?? null;
        const owner = this.ownerOf(target);
        // Animations present at the first frame start with their composition; ones created
        // later (a class toggled at 2 s) start when they first appear. A CSS transition is
        // started by a style change made since the previous frame, so it has run for one frame:
        // otherwise a transition that is replaced every frame (GSAP tweening a property that also
        // has `transition`) would never leave its start value.
        const started = animation instanceof CSSTransition ? this.previousSeek : t;
        origin = this.initialScanDone ? Math.max(owner.offset, Math.min(started, t)) : owner.offset;
        if (this.afterJump && this.initialScanDone) {
          // When it started is lost with the frames skipped: stepping would have seen it earlier.
          const kind =
            animation instanceof CSSTransition ? "CSS transition" : "CSS or WAAPI animation";
          if (this.jumpProblems.length === 0) {
            this.jumpProblems.push(`a ${kind} started at a time between the frames skipped`);
          }
        }
        this.animationOrigins.set(animation, origin);
      }
      if (animation.playState !== "paused") animation.pause();
      animation.currentTime = Math.max(0, t - origin) * 1000;
    }
    this.initialScanDone = true;
    this.afterJump = false;
    this.previousSeek = t;
  }

  private seekVideo(video: HTMLVideoElement, target: number): Promise<void> {
    return new Promise((resolve) => {
      const finish = (timedOut: boolean) => {
        this.clock.realClearTimeout(timer);
        video.removeEventListener("seeked", onSeeked);
        if (timedOut) this.warnOnce(video, "never finished seeking");
        else if (Math.abs(video.currentTime - target) > 0.05) {
          this.warnOnce(
            video,
            `cannot seek (stuck at ${video.currentTime.toFixed(2)} s); it must be served with HTTP Range support`,
          );
        }
        resolve();
      };
      const onSeeked = () => finish(false);
      const timer = this.clock.realSetTimeout(() => finish(true), SEEKED_TIMEOUT_MS);
      video.addEventListener("seeked", onSeeked);
      video.currentTime = target;
    });
  }

  private readonly warned = new WeakSet<Element>();
  private warnOnce(video: HTMLVideoElement, problem: string): void {
    if (this.warned.has(video)) return;
    this.warned.add(video);
    const src = video.getAttribute("src") ?? video.currentSrc;
    this.warnings.push(`video ${src} ${problem}`);
  }

  /** Audio the encoder mixes: every <audio>, and <video data-has-audio>. */
  mediaSources(): MediaSource[] {
    const sources: MediaSource[] = [];
    for (const entry of this.media) {
      const element = entry.element;
      const isVideo = element instanceof HTMLVideoElement;
      if (isVideo && !element.hasAttribute("data-has-audio")) continue;
      const raw =
        element.currentSrc ||
        element.getAttribute("src") ||
        element.querySelector("source[src]")?.getAttribute("src");
      if (!raw) continue;
      let duration: number | null = entry.declaredDuration ?? null;
      const ownerEnd = instanceEnd(entry.owner);
      if (ownerEnd !== undefined) {
        const untilOwnerEnds = Math.max(0, ownerEnd - entry.start);
        duration = duration === null ? untilOwnerEnds : Math.min(duration, untilOwnerEnds);
      }
      sources.push({
        kind: isVideo ? "video" : "audio",
        src: new URL(raw, document.baseURI).href,
        start: entry.start,
        duration,
        mediaStart: entry.mediaStart,
        volume: entry.volume,
        ...(entry.rate !== 1 ? { rate: entry.rate } : {}),
      });
    }
    return sources;
  }
}

/**
 * Seeks as the reference runtime does: to the time with events (onUpdate, callbacks), then a
 * millisecond off and back without events. GSAP renders nothing for the time it is already at, so
 * without the second step zero-duration sets at the start would be missing from the first frame.
 */
function seekTimeline(timeline: TimelineLike, time: number): void {
  if (!timeline.totalTime) {
    timeline.seek?.(time, false);
    return;
  }
  timeline.totalTime(time, false);
  timeline.totalTime(time >= NUDGE_SECONDS ? time - NUDGE_SECONDS : time + NUDGE_SECONDS, true);
  timeline.totalTime(time, true);
}

function setHidden(item: TimedElement, hidden: boolean): void {
  if (item.hidden === hidden) return;
  item.hidden = hidden;
  if (hidden) item.element.setAttribute(HIDDEN_ATTR, "");
  else item.element.removeAttribute(HIDDEN_ATTR);
}

/** Where a nested instance (or one containing it) stops being shown, if anywhere. The root's own
 * end is the end of the video, which the encoder applies to every source anyway. */
function instanceEnd(instance: CompositionInstance): number | undefined {
  let end: number | undefined;
  for (let at: CompositionInstance | undefined = instance; at?.parent; at = at.parent) {
    if (at.declaredDuration !== undefined) {
      const atEnd = spanStart(at) + at.declaredDuration;
      end = end === undefined ? atEnd : Math.min(end, atEnd);
    }
  }
  return end;
}
