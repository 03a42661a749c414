// <svc-player>: previews a composition in any page. The composition runs in a sandboxed iframe
// (scripts only, opaque origin) with the engine's own page runtime installed before its scripts,
// and the player drives it by seeking, so a previewed frame is the frame a render produces.
// By default the frame document is built here from the fetched HTML (srcdoc with a <base>), which
// means the server of `src` must allow CORS for the player's fetch and for fetches a composition
// makes itself (sub-compositions), and that the frame inherits the embedding page's CSP. With
// `frame="served"` the frame loads `src` itself with `?svc-frame=1` and the variables in its URL
// fragment, and the server (the desktop app's preview server) answers with the same document
// (src/shared/frame-document.ts): the frame then has its own origin and policy, so the page can
// keep a strict CSP. Previews are silent: media elements are seeked, not played. Attribute
// `library-base` names where the page serving the player answers the CDN URLs svc has copies of
// (`<base>/cdn/<host>/<path>`, e.g. `libraryResponse` of `svc/player-assets`): the frame and the
// sub-compositions it loads use those instead of the CDN (srcdoc frames only; the preview server
// points served frames at its own).
import FRAME_SCRIPT from "svc:frame-script";
import {
  buildFrameDocument as injectFrameScript,
  frameAspect,
  inlineFrameConfigScript,
  servedFrameUrl,
  type FrameAspect,
} from "../shared/frame-document";
import type { PageCaptions } from "../shared/captions";
import { isFrameMessage, PLAYER_TAG, type FrameInfo, type FrameMessage } from "./protocol";
import { frameCount } from "../shared/frames";

const DEFAULT_FPS = 30;
/**
 * How long after a served frame's `load` its `started` message may still arrive (both cross
 * process boundaries separately); without it by then, the document was not a frame document.
 */
const SERVED_START_GRACE_MS = 1000;

// Inline SVG icons: glyphs such as ⏮ are missing from many system fonts.
const ICON = {
  play: '<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true"><path fill="currentColor" d="M4 2.5v11l9-5.5z"/></svg>',
  pause:
    '<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true"><path fill="currentColor" d="M3.5 2.5h3v11h-3zM9.5 2.5h3v11h-3z"/></svg>',
  prev: '<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true"><path fill="currentColor" d="M3 2.5h2v11H3zM14 2.5v11L6 8z"/></svg>',
  next: '<svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true"><path fill="currentColor" d="M11 2.5h2v11h-2zM2 2.5v11L10 8z"/></svg>',
};

const STYLE = `
:host { display: inline-block; position: relative; width: 640px; max-width: 100%; color: #eee;
  font: 12px/1.4 system-ui, sans-serif; background: #111; border-radius: 6px; overflow: hidden; }
:host(:focus-visible) { outline: 2px solid #7a5cff; outline-offset: 2px; }
.stage { position: relative; width: 100%; overflow: hidden; background:
  repeating-conic-gradient(#2a2a2a 0% 25%, #1e1e1e 0% 50%) 0 0 / 16px 16px; }
iframe { position: absolute; left: 0; top: 0; border: 0; transform-origin: 0 0; background: transparent; }
.message { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center;
  padding: 16px; text-align: center; color: #ccc; }
.message[hidden] { display: none; }
.controls { display: flex; align-items: center; gap: 6px; padding: 6px 8px; background: #1b1b1f; }
.controls[hidden] { display: none; }
button { all: unset; cursor: pointer; min-width: 24px; height: 24px; display: inline-flex;
  align-items: center; justify-content: center; border-radius: 4px; color: #eee; }
button:hover { background: #333; }
button:focus-visible { background: #333; outline: 2px solid #7a5cff; outline-offset: 1px; }
input[type=range]:focus-visible { outline: 2px solid #7a5cff; outline-offset: 2px; }
input[type=range] { flex: 1; accent-color: #7a5cff; }
.time { font-variant-numeric: tabular-nums; white-space: nowrap; color: #bbb; }
`;

function formatTime(seconds: number): string {
  const minutes = Math.floor(seconds / 60);
  return `${minutes}:${(seconds - minutes * 60).toFixed(2).padStart(5, "0")}`;
}

/**
 * The srcdoc frame document: the runtime (with its config) at the start of the document, before
 * any page script, and the CDN URLs svc answers pointed at `libraryBase` (when given) so previews
 * work offline and draw with the same files as renders.
 */
export function buildFrameDocument(
  source: string,
  baseUrl: string,
  variables: Record<string, unknown>,
  libraryBase?: string,
  aspect?: FrameAspect,
): string {
  return injectFrameScript(source, {
    script: `${inlineFrameConfigScript(variables, libraryBase, aspect)}\n${FRAME_SCRIPT}`,
    baseUrl,
    ...(libraryBase ? { libraryBase } : {}),
  });
}

let sharedSheet: CSSStyleSheet | undefined;

/** The player's styles as a constructed sheet (not an inline <style>, which a strict CSP refuses). */
function adoptStyles(shadow: ShadowRoot): void {
  if (typeof CSSStyleSheet === "function" && "adoptedStyleSheets" in shadow) {
    if (!sharedSheet) {
      sharedSheet = new CSSStyleSheet();
      sharedSheet.replaceSync(STYLE);
    }
    shadow.adoptedStyleSheets = [sharedSheet];
  } else {
    const style = document.createElement("style");
    style.textContent = STYLE;
    shadow.prepend(style);
  }
}

export class SvcPlayer extends HTMLElement {
  static observedAttributes = [
    "src",
    "frame",
    "width",
    "height",
    "controls",
    "fps",
    "aspect-ratio",
  ];

  private readonly shadow: ShadowRoot;
  private readonly stage: HTMLDivElement;
  private readonly message: HTMLDivElement;
  private readonly controlsBar: HTMLDivElement;
  private readonly playButton: HTMLButtonElement;
  private readonly scrubber: HTMLInputElement;
  private readonly timeLabel: HTMLSpanElement;
  private iframe: HTMLIFrameElement | undefined;
  private info: FrameInfo | undefined;
  private values: Record<string, unknown> = {};
  private captionsValue: PageCaptions | undefined;
  private time = 0;
  private isPaused = true;
  private frameStarted = false;
  private loadToken = 0;
  private nextSeekId = 1;
  private seekInFlight: { id: number; resolve: () => void } | undefined;
  private queuedSeek: { time: number; waiters: Array<() => void> } | undefined;
  private playback: { wallStart: number; timeStart: number; frame: number } | undefined;

  constructor() {
    super();
    this.shadow = this.attachShadow({ mode: "open" });
    this.shadow.innerHTML = `<div class="stage" part="stage"><div class="message" role="status">Loading…</div></div>
      <div class="controls" part="controls" hidden>
        <button class="prev" type="button" aria-label="Previous frame">${ICON.prev}</button>
        <button class="play" type="button" aria-label="Play">${ICON.play}</button>
        <button class="next" type="button" aria-label="Next frame">${ICON.next}</button>
        <input class="scrub" type="range" min="0" max="0" step="any" value="0" aria-label="Time">
        <span class="time">0:00.00 / 0:00.00</span>
      </div>`;
    this.stage = this.shadow.querySelector(".stage")!;
    this.message = this.shadow.querySelector(".message")!;
    this.controlsBar = this.shadow.querySelector(".controls")!;
    this.playButton = this.shadow.querySelector(".play")!;
    this.scrubber = this.shadow.querySelector(".scrub")!;
    this.timeLabel = this.shadow.querySelector(".time")!;
    adoptStyles(this.shadow);
    this.playButton.addEventListener("click", () => (this.isPaused ? this.play() : this.pause()));
    this.shadow.querySelector(".prev")!.addEventListener("click", () => void this.stepFrames(-1));
    this.shadow.querySelector(".next")!.addEventListener("click", () => void this.stepFrames(1));
    this.scrubber.addEventListener("input", () => {
      this.pause();
      void this.seek(Number(this.scrubber.value));
    });
    this.addEventListener("keydown", (event) => this.onKey(event));
    window.addEventListener("message", (event) => this.onMessage(event));
    new ResizeObserver(() => this.layout()).observe(this);
  }

  connectedCallback(): void {
    if (!this.hasAttribute("tabindex")) this.tabIndex = 0;
    this.controlsBar.hidden = !this.hasAttribute("controls");
    this.layout();
    if (!this.iframe && this.getAttribute("src")) void this.load();
  }

  attributeChangedCallback(name: string, previous: string | null, value: string | null): void {
    if (name === "controls") this.controlsBar.hidden = value === null;
    if (name === "width" || name === "height") this.layout();
    if (
      (name === "src" || name === "frame" || name === "aspect-ratio") &&
      previous !== value &&
      this.isConnected
    )
      void this.load();
  }

  /** Seconds of the composition, 0 until ready. */
  get duration(): number {
    return this.info?.duration ?? 0;
  }

  get currentTime(): number {
    return this.time;
  }

  set currentTime(value: number) {
    void this.seek(value);
  }

  get paused(): boolean {
    return this.isPaused;
  }

  get fps(): number {
    const value = Number(this.getAttribute("fps"));
    return Number.isFinite(value) && value > 0 ? value : (this.info?.fpsHint ?? DEFAULT_FPS);
  }

  get variables(): Record<string, unknown> {
    return { ...this.values };
  }

  /** New values restart the frame (variables apply before page scripts) at the same time. */
  set variables(values: Record<string, unknown>) {
    this.values = { ...values };
    if (this.getAttribute("src")) void this.load(this.time);
  }

  /** Captions drawn over the composition (the runtime's captions layer); undefined for none. */
  get captions(): PageCaptions | undefined {
    return this.captionsValue;
  }

  /** New captions show at once, on the frame shown now; the frame is not reloaded. */
  set captions(captions: PageCaptions | undefined) {
    this.captionsValue = captions;
    if (!this.info) return;
    this.sendCaptions();
    void this.requestFrame(this.time);
  }

  private sendCaptions(): void {
    this.iframe?.contentWindow?.postMessage(
      { tag: PLAYER_TAG, type: "captions", captions: this.captionsValue ?? null },
      "*",
    );
  }

  play(): void {
    if (!this.isPaused || !this.info) {
      if (!this.info && this.hasAttribute("src")) this.setAttribute("autoplay", "");
      return;
    }
    if (this.time >= this.lastFrameTime()) this.time = 0;
    this.isPaused = false;
    this.playButton.innerHTML = ICON.pause;
    this.playButton.setAttribute("aria-label", "Pause");
    this.playback = { wallStart: performance.now(), timeStart: this.time, frame: 0 };
    this.dispatchEvent(new Event("play"));
    this.tick();
  }

  pause(): void {
    if (this.isPaused) return;
    this.isPaused = true;
    this.playback = undefined;
    this.playButton.innerHTML = ICON.play;
    this.playButton.setAttribute("aria-label", "Play");
    this.dispatchEvent(new Event("pause"));
  }

  /** Shows time t (seconds); resolves once the frame shows it. */
  seek(time: number): Promise<void> {
    const clamped = Math.max(0, Math.min(Number.isFinite(time) ? time : 0, this.duration || time));
    this.time = clamped;
    this.updateControls();
    return this.requestFrame(clamped);
  }

  private lastFrameTime(): number {
    const frames = frameCount(this.duration, this.fps);
    return Math.max(0, (frames - 1) / this.fps);
  }

  private async stepFrames(count: number): Promise<void> {
    this.pause();
    const frame = Math.round(this.time * this.fps) + count;
    await this.seek(Math.max(0, Math.min(frame / this.fps, this.lastFrameTime())));
  }

  private onKey(event: KeyboardEvent): void {
    if (event.key === " ") {
      event.preventDefault();
      if (this.isPaused) this.play();
      else this.pause();
    } else if (event.key === "ArrowLeft" || event.key === "ArrowRight") {
      event.preventDefault();
      const direction = event.key === "ArrowLeft" ? -1 : 1;
      void this.stepFrames(event.shiftKey ? direction * Math.round(this.fps) : direction);
    }
  }

  private tick(): void {
    if (this.isPaused || !this.playback) return;
    const elapsed = (performance.now() - this.playback.wallStart) / 1000;
    let time = this.playback.timeStart + elapsed;
    const end = this.lastFrameTime();
    if (time > end) {
      if (this.hasAttribute("loop")) {
        this.playback = { wallStart: performance.now(), timeStart: 0, frame: 0 };
        time = 0;
      } else {
        void this.seek(end);
        this.pause();
        this.dispatchEvent(new Event("ended"));
        return;
      }
    }
    // Quantize to frames, as a render does; skip frames while the previous seek is in flight.
    this.time = Math.floor(time * this.fps) / this.fps;
    this.updateControls();
    if (!this.seekInFlight) void this.requestFrame(this.time);
    requestAnimationFrame(() => this.tick());
  }

  private requestFrame(time: number): Promise<void> {
    return new Promise((resolve) => {
      if (!this.iframe?.contentWindow || !this.info) return resolve();
      if (this.seekInFlight) {
        // Keep only the latest wish; everyone waiting resolves when it lands.
        this.queuedSeek = { time, waiters: [...(this.queuedSeek?.waiters ?? []), resolve] };
        return;
      }
      const id = this.nextSeekId++;
      this.seekInFlight = { id, resolve };
      this.iframe.contentWindow.postMessage({ tag: PLAYER_TAG, type: "seek", id, time }, "*");
    });
  }

  private onMessage(event: MessageEvent): void {
    if (!this.iframe || event.source !== this.iframe.contentWindow || !isFrameMessage(event.data))
      return;
    const message: FrameMessage = event.data;
    if (message.type === "started") {
      this.frameStarted = true;
    } else if (message.type === "ready") {
      this.info = message.info;
      this.message.hidden = true;
      this.scrubber.max = String(message.info.duration);
      this.scrubber.step = String(1 / this.fps);
      this.layout();
      if (this.captionsValue) this.sendCaptions();
      const resumeAt = Math.min(this.time, this.lastFrameTime());
      void this.seek(resumeAt).then(() => {
        this.dispatchEvent(new Event("ready"));
        if (this.hasAttribute("autoplay")) this.play();
      });
    } else if (message.type === "seeked") {
      const done = this.seekInFlight;
      if (!done || done.id !== message.id) return;
      this.seekInFlight = undefined;
      done.resolve();
      this.dispatchEvent(new Event("timeupdate"));
      const queued = this.queuedSeek;
      this.queuedSeek = undefined;
      if (queued)
        void this.requestFrame(queued.time).then(() =>
          queued.waiters.forEach((resolve) => resolve()),
        );
    } else {
      this.fail(message.message);
    }
  }

  private fail(text: string): void {
    this.pause();
    this.message.hidden = false;
    this.message.textContent = `This composition cannot be previewed: ${text}`;
    this.dispatchEvent(new CustomEvent("error", { detail: { message: text } }));
  }

  private async load(startAt = 0): Promise<void> {
    const token = ++this.loadToken;
    const src = this.getAttribute("src");
    this.pause();
    this.info = undefined;
    this.seekInFlight = undefined;
    this.queuedSeek = undefined;
    this.time = startAt;
    this.frameStarted = false;
    this.message.hidden = false;
    this.message.textContent = "Loading…";
    if (!src) return;
    const url = new URL(src, document.baseURI).href;
    if (this.getAttribute("frame") === "served") {
      const iframe = this.createFrame();
      // Set before the frame is attached, so no load event fires for an initial about:blank.
      iframe.src = servedFrameUrl(url, this.values, this.aspect());
      iframe.addEventListener("load", () => this.checkServedFrameStarted(iframe, src));
      this.mountFrame(iframe);
      return;
    }
    let html: string;
    try {
      const response = await fetch(url);
      if (!response.ok) throw new Error(`HTTP ${response.status} for ${src}`);
      html = await response.text();
    } catch (error) {
      if (token === this.loadToken)
        this.fail(error instanceof Error ? error.message : String(error));
      return;
    }
    if (token !== this.loadToken) return;
    const iframe = this.createFrame();
    const libraryBase = this.getAttribute("library-base");
    iframe.srcdoc = buildFrameDocument(
      html,
      url,
      this.values,
      libraryBase ? new URL(libraryBase, document.baseURI).href : undefined,
      this.aspect(),
    );
    this.mountFrame(iframe);
  }

  /**
   * `aspect-ratio="9:16"` (or 16:9, 1:1): the composition laid out as a render of that size lays
   * it out (data-aspect-ratio, the size's viewport; docs/composition-format.md). Default: its own.
   */
  private aspect(): FrameAspect | undefined {
    return frameAspect(this.getAttribute("aspect-ratio"));
  }

  private createFrame(): HTMLIFrameElement {
    const iframe = document.createElement("iframe");
    iframe.setAttribute("sandbox", "allow-scripts");
    // The player itself takes the keys (Space, arrows); the frame is only a picture, not a stop.
    iframe.tabIndex = -1;
    iframe.setAttribute("title", "Composition preview");
    return iframe;
  }

  private mountFrame(iframe: HTMLIFrameElement): void {
    this.iframe?.remove();
    this.iframe = iframe;
    this.stage.prepend(iframe);
    this.layout();
  }

  /** A served frame that loaded without its frame script (an error page, a plain file) fails. */
  private checkServedFrameStarted(iframe: HTMLIFrameElement, src: string): void {
    setTimeout(() => {
      if (iframe !== this.iframe || this.frameStarted) return;
      this.fail(`${src} did not load as a preview frame (it needs svc's preview server).`);
    }, SERVED_START_GRACE_MS);
  }

  private updateControls(): void {
    this.scrubber.value = String(this.time);
    const frame = Math.round(this.time * this.fps);
    this.timeLabel.textContent = `${formatTime(this.time)} / ${formatTime(this.duration)} · frame ${frame}`;
  }

  /**
   * Sizes the picture: `width` alone sets the player's width (height follows the composition's
   * shape); `height` alone sets the picture's height (width follows); both make a box the picture
   * is fitted into, centred.
   */
  private layout(): void {
    const widthAttr = Number(this.getAttribute("width")) || undefined;
    const heightAttr = Number(this.getAttribute("height")) || undefined;
    const compWidth = this.info?.width ?? 1920;
    const compHeight = this.info?.height ?? 1080;
    const boxWidth =
      widthAttr ?? (heightAttr ? Math.round((heightAttr * compWidth) / compHeight) : undefined);
    if (boxWidth) this.style.width = `${boxWidth}px`;
    const shown = this.stage.clientWidth || boxWidth || 640;
    const scale = heightAttr
      ? Math.min(shown / compWidth, heightAttr / compHeight)
      : shown / compWidth;
    this.stage.style.height = `${heightAttr ?? Math.round(compHeight * scale)}px`;
    if (this.iframe) {
      this.iframe.style.width = `${compWidth}px`;
      this.iframe.style.height = `${compHeight}px`;
      this.iframe.style.left = `${Math.max(0, (shown - compWidth * scale) / 2)}px`;
      this.iframe.style.transform = `scale(${scale})`;
    }
  }
}

export function defineSvcPlayer(): void {
  if (!customElements.get("svc-player")) customElements.define("svc-player", SvcPlayer);
}
