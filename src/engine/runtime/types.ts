// Shapes shared by the page runtime's modules: the page contract the engine reads
// (`window.__svc`), the GSAP surface we rely on, and one mounted composition instance.
import type { PageCaptions } from "../../shared/captions";
import type { VariableDefinition } from "../../shared/variables";

export interface CompositionInfo {
  compositionId: string;
  width: number;
  height: number;
  /** Seconds. */
  duration: number;
  fpsHint?: number;
  /** The raw `data-composition-variables` JSON of the root composition, or null. */
  variablesJson: string | null;
  warnings: string[];
}

export interface MediaSource {
  kind: "audio" | "video";
  /** Absolute URL. */
  src: string;
  /** Seconds on the root timeline. */
  start: number;
  /** Seconds of media to play, or null for "until the media ends". */
  duration: number | null;
  /** Offset into the media file, seconds. */
  mediaStart: number;
  volume: number;
  /** A video's `data-playback-rate`, when not 1: its sound is sped up by as much in the mix. */
  rate?: number;
}

/** `window.__svc`: the page contract the engine and the player drive. */
export interface SvcPage {
  ready: boolean;
  /** Seconds; 0 until ready (same as info().duration). */
  readonly duration: number;
  error?: string;
  waitingFor: string[];
  info(): CompositionInfo;
  /** Resolves true when a video moved to another frame (its picture reaches the compositor late). */
  seek(t: number): Promise<boolean>;
  /**
   * Brings a page that would draw frame `fromFrame` next to the state of one that drew every frame
   * before `toFrame`, without drawing: its clock (timers, rAF) is stepped through each frame time,
   * timelines and animations are left for the next seek. Refused (nothing done, `jumped` false)
   * when the page keeps state that only stepping reproduces; `reasons` say what.
   */
  jump(fromFrame: number, toFrame: number, fps: number): Promise<JumpResult>;
  /** Problems the first seek after a jump found (it may differ from stepping); then cleared. */
  jumpProblems(): string[];
  /**
   * Asks Chromium to hand the picture of every video the last seek moved to the compositor again,
   * in case its first hand-over was dropped (Scene.presentMovedVideos). The engine calls it after
   * the frames it commits for a moved video, before the screenshot.
   */
  presentVideos(): void;
  media(): MediaSource[];
}

export interface JumpResult {
  jumped: boolean;
  reasons: string[];
}

export interface SvcVariablesApi {
  getVariables(): Record<string, unknown>;
}

/** The part of a GSAP timeline (or anything timeline-like) the runtime drives. */
export interface TimelineLike {
  duration(): number;
  seek?(position: number, suppressEvents?: boolean): unknown;
  totalTime?(position: number, suppressEvents?: boolean): unknown;
  paused?(value?: boolean): unknown;
  /** GSAP: the tweens and timelines inside (nested), and the options it was made with. */
  getChildren?(nested?: boolean, tweens?: boolean, timelines?: boolean): unknown[];
  vars?: Record<string, unknown>;
}

export type TimelineRegistry = Record<string, TimelineLike | undefined> | TimelineLike[];

/** One composition on the page: the root, or a nested instance mounted into its host. */
export interface CompositionInstance {
  id: string;
  /** The root element, or the host element a sub-composition was mounted into. */
  element: HTMLElement;
  parent: CompositionInstance | undefined;
  depth: number;
  /** Seconds on the root timeline where this instance's time 0 falls. */
  offset: number;
  /**
   * Nested instances, once timing.ts resolved them: seconds on the root timeline where the host
   * starts (`offset` is that less the host's data-playback-start), and the host's
   * data-playback-rate, which its timelines run at (its clips and media do not: the reference's).
   */
  start?: number;
  playbackStart?: number;
  rate?: number;
  /** The host's data-duration (seconds), if given. */
  declaredDuration: number | undefined;
  schema: VariableDefinition[];
  /** Schema defaults merged with this instance's values. */
  values: Record<string, unknown>;
  /** The values given to this instance (config variables for the root, data-variable-values for a host). */
  givenValues: Record<string, unknown>;
  /** Timelines this instance's scripts registered (captured while they ran), its own id first. */
  timelines: TimelineLike[];
  /** URL of the sub-composition file (nested instances only). */
  src: string | undefined;
}

/** The aspect ratio a page is rendered at, and its viewport in CSS pixels. */
export interface PageAspect {
  ratio: string;
  width: number;
  height: number;
}

declare global {
  interface Window {
    __svc?: SvcPage;
    svc?: SvcVariablesApi;
    __svcVariables?: Record<string, unknown>;
    __svcConfig?: {
      variables?: Record<string, unknown>;
      epochMs?: number;
      /** Previews only: where the serving page answers CDN URLs (src/shared/frame-document.ts). */
      libraryBase?: string;
      /** The output's aspect ratio and the viewport the page is drawn at (runtime/aspect.ts). */
      aspect?: PageAspect;
      /** Captions drawn on top of the composition (runtime/captions.ts). */
      captions?: PageCaptions;
      /** Renders: the output frame rate (runtime/video-time.ts). */
      fps?: number;
    };
    __timelines?: TimelineRegistry;
  }
}
