// The captions layer (issue 37): drawn by the page runtime on top of any composition, so
// `<svc-player>` and a render draw the same pixels. It lives in a shadow root on the root
// composition element (the page's CSS cannot restyle it, and it is laid out in the output frame's
// CSS pixels); every seek redraws it for that time after the composition has been seeked. Cues
// come from `__svcConfig.captions` (renders) or `__svcCaptions.set()` (the player's bridge, live
// edits). Decisions:
// - Safe zones by the frame's shape: a 9:16 frame keeps the bottom quarter free (platform buttons
//   cover the bottom fifth), every shape keeps side margins; text wraps inside them, balanced
//   (`text-wrap: balance`), and a word too long for a line breaks rather than overflowing.
// - Right-to-left and CJK text: each line's direction comes from its own text
//   (`unicode-bidi: plaintext`), Japanese breaks by the strict kinsoku rules (`line-break:
//   strict`); after the creator's font come Noto Arabic and Noto CJK (Debian fonts-noto-core,
//   fonts-noto-cjk).
// - Look: the brand's font and colours when given, else the composition's CSS variables
//   `--svc-caption-font`, `--svc-caption-color`, `--svc-caption-accent`,
//   `--svc-caption-background` on its root, else the style's own.
import {
  activeCues,
  timedWords,
  wordGroups,
  type CaptionCue,
  type CaptionWord,
  type PageCaptions,
} from "../../shared/captions";
import { provideBundledFamily } from "./fonts";
import type { SvcPage } from "./types";

const DEFAULT_FONT = "Inter";
const SCRIPT_FALLBACKS = `"Noto Sans Arabic", "Noto Naskh Arabic", "Noto Sans Hebrew", "Noto Sans CJK JP", "Noto Sans CJK SC", sans-serif`;

/** Margins of the safe zone, as fractions of the frame, by its shape. */
const SAFE_ZONES = {
  wide: { side: 0.1, bottom: 0.08, middle: 0.5 },
  tall: { side: 0.08, bottom: 0.25, middle: 0.55 },
  square: { side: 0.08, bottom: 0.12, middle: 0.5 },
} as const;

type Shape = keyof typeof SAFE_ZONES;

function shapeOf(width: number, height: number): Shape {
  const ratio = width / height;
  return ratio > 1.2 ? "wide" : ratio < 0.8 ? "tall" : "square";
}

// `u` is a hundredth of the frame's short side: sizes read the same on a phone in any shape.
const CSS = `
:host { all: initial; }
.frame { position: absolute; inset: 0; font-family: var(--cap-font); color: var(--cap-color);
  font-kerning: normal; text-rendering: geometricPrecision; }
.box { position: absolute; left: var(--side); right: var(--side); bottom: var(--bottom);
  display: flex; flex-direction: column; align-items: center; gap: calc(var(--u) * 0.8); }
.cue { box-sizing: border-box; max-width: 100%; padding: 0 0.35em; text-align: center;
  text-wrap: balance; overflow-wrap: anywhere; line-break: strict; line-height: 1.25; }
.line { display: block; unicode-bidi: plaintext; }
.frame[data-style="clean"] .cue, .frame[data-style="karaoke"] .cue {
  font-size: calc(var(--u) * 4.6); font-weight: 700;
  text-shadow: 0 0 0.12em rgba(0,0,0,0.95), 0 0.04em 0.1em rgba(0,0,0,0.9); }
.frame[data-style="karaoke"] .word.spoken { color: var(--cap-accent); }
.frame[data-style="band"] .box { gap: 0; }
.frame[data-style="band"] .cue { width: 100%; padding: 0.45em 0.9em; font-size: calc(var(--u) * 4.2);
  font-weight: 700; background: var(--cap-background); border-radius: 0.25em; }
.frame[data-style="band"] .cue + .cue { border-top-left-radius: 0; border-top-right-radius: 0; }
.frame[data-style="social"] .box { bottom: auto; top: var(--middle); transform: translateY(-50%); }
.frame[data-style="social"] .cue { font-size: calc(var(--u) * 9); font-weight: 900;
  text-transform: uppercase; line-height: 1.1;
  text-shadow: 0 0 0.08em rgba(0,0,0,0.95), 0 0.05em 0.12em rgba(0,0,0,0.9); }
.frame[data-style="social"] .word.now { color: var(--cap-accent); }
`;

const STYLE_DEFAULTS = {
  color: "#ffffff",
  accent: "#ffd400",
  background: "rgba(12, 12, 16, 0.78)",
};

interface CaptionsControl {
  /** New captions (or none); drawn at the next seek. */
  set(captions: PageCaptions | undefined): void;
}

declare global {
  interface Window {
    __svcCaptions?: CaptionsControl;
  }
}

function findRoot(): HTMLElement | null {
  return (
    document.querySelector<HTMLElement>("[data-composition-id][data-width][data-height]") ??
    document.querySelector<HTMLElement>("[data-composition-id]")
  );
}

class CaptionsLayer {
  private host: HTMLElement | undefined;
  private frame: HTMLElement | undefined;
  private box: HTMLElement | undefined;
  private shown = "";
  private fontsReady: Promise<unknown> = Promise.resolve();

  constructor(private captions: PageCaptions | undefined) {
    this.loadFont();
  }

  set(captions: PageCaptions | undefined): void {
    this.captions = captions;
    this.shown = "\u0000";
    this.frame = undefined;
    this.loadFont();
  }

  private loadFont(): void {
    if (!this.captions) return;
    const families = [this.captions.look?.font, DEFAULT_FONT].filter(Boolean) as string[];
    this.fontsReady = Promise.all(families.map((family) => provideBundledFamily(family))).catch(
      () => undefined,
    );
  }

  async draw(t: number): Promise<void> {
    if (!this.captions && !this.host) return;
    await this.fontsReady;
    const frame = this.mount();
    if (!frame || !this.box) return;
    const captions = this.captions;
    const cues = captions ? activeCues(captions.cues, t) : [];
    const style = captions?.style ?? "clean";
    const parts = cues.map((cue) => this.partOf(cue, style, t));
    const key = JSON.stringify(
      parts.map((part) => [part.text, part.words.map((w) => w.text), part.marks]),
    );
    if (key === this.shown) return;
    this.shown = key;
    const box = this.box;
    box.replaceChildren(...parts.map((part) => this.cueElement(part)));
  }

  /** What one cue shows at t: its text (or the current word group) and which words are marked. */
  private partOf(
    cue: CaptionCue,
    style: PageCaptions["style"],
    t: number,
  ): { text: string; words: CaptionWord[]; marks: boolean[] } {
    const at = t + 1e-6;
    if (style === "social") {
      const group = wordGroups(cue).find((g) => g.start <= at && at < g.end);
      if (!group) return { text: "", words: [], marks: [] };
      const words = timedWords(cue).filter((w) => w.start >= group.start && w.start < group.end);
      // The word being said now is marked; the group's text is its words as written.
      return { text: group.text, words, marks: words.map((w) => w.start <= at && at < w.end) };
    }
    if (style === "karaoke") {
      const words = timedWords(cue);
      return { text: cue.text, words, marks: words.map((w) => w.start <= at) };
    }
    return { text: cue.text, words: [], marks: [] };
  }

  private cueElement(part: { text: string; words: CaptionWord[]; marks: boolean[] }): HTMLElement {
    const cue = document.createElement("div");
    cue.className = "cue";
    let wordAt = 0;
    for (const lineText of part.text.split("\n")) {
      const line = document.createElement("span");
      line.className = "line";
      line.dir = "auto";
      // Words are found in the line as written, so spacing, punctuation and CJK stay as they are.
      let rest = lineText;
      while (rest !== "") {
        const word = part.words[wordAt];
        const found = word ? rest.indexOf(word.text) : -1;
        if (!word || found < 0) {
          line.append(rest);
          break;
        }
        if (found > 0) line.append(rest.slice(0, found));
        const span = document.createElement("span");
        span.className = part.marks[wordAt] ? "word spoken now" : "word";
        span.textContent = word.text;
        line.append(span);
        rest = rest.slice(found + word.text.length);
        wordAt++;
      }
      cue.append(line);
    }
    return cue;
  }

  /** The layer's elements on the root composition, made on first use and after set(). */
  private mount(): HTMLElement | undefined {
    const root = findRoot();
    if (!root) return undefined;
    if (!this.host || !this.host.isConnected || this.host.parentElement !== root) {
      this.host?.remove();
      const host = document.createElement("div");
      host.setAttribute("data-svc-captions", "");
      for (const [name, value] of [
        ["position", "absolute"],
        ["inset", "0"],
        ["z-index", "2147483647"],
        ["pointer-events", "none"],
        ["display", "block"],
        ["margin", "0"],
        ["transform", "none"],
      ]) {
        host.style.setProperty(name!, value!, "important");
      }
      const shadow = host.attachShadow({ mode: "open" });
      const sheet = document.createElement("style");
      sheet.textContent = CSS;
      shadow.append(sheet);
      root.append(host);
      this.host = host;
      this.frame = undefined;
    }
    if (!this.frame) {
      const shadow = this.host.shadowRoot!;
      shadow.querySelector(".frame")?.remove();
      const frame = document.createElement("div");
      frame.className = "frame";
      const box = document.createElement("div");
      box.className = "box";
      frame.append(box);
      shadow.append(frame);
      this.frame = frame;
      this.box = box;
      this.shown = "\u0000";
    }
    this.styleFrame(root, this.frame);
    return this.frame;
  }

  private styleFrame(root: HTMLElement, frame: HTMLElement): void {
    const width = root.offsetWidth || window.innerWidth;
    const height = root.offsetHeight || window.innerHeight;
    const zone = SAFE_ZONES[shapeOf(width, height)];
    const look = this.captions?.look ?? {};
    const font = look.font ? `"${look.font}", ` : "";
    const vars: Record<string, string> = {
      "--u": `${Math.min(width, height) / 100}px`,
      "--side": `${zone.side * width}px`,
      "--bottom": `${zone.bottom * height}px`,
      "--middle": `${zone.middle * height}px`,
      "--cap-font": `${font}var(--svc-caption-font, ${DEFAULT_FONT}), ${SCRIPT_FALLBACKS}`,
      "--cap-color": look.color ?? `var(--svc-caption-color, ${STYLE_DEFAULTS.color})`,
      "--cap-accent": look.accent ?? `var(--svc-caption-accent, ${STYLE_DEFAULTS.accent})`,
      "--cap-background":
        look.background ?? `var(--svc-caption-background, ${STYLE_DEFAULTS.background})`,
    };
    for (const [name, value] of Object.entries(vars)) {
      if (frame.style.getPropertyValue(name) !== value) frame.style.setProperty(name, value);
    }
    const style = this.captions?.style ?? "clean";
    if (frame.dataset.style !== style) frame.dataset.style = style;
  }
}

/** Adds the captions layer to the page contract: every seek draws the captions of its time. */
export function installCaptions(page: SvcPage, captions: PageCaptions | undefined): void {
  const layer = new CaptionsLayer(captions);
  const seek = page.seek.bind(page);
  page.seek = async (t: number) => {
    const moved = await seek(t);
    await layer.draw(Number.isFinite(t) ? Math.max(0, t) : 0);
    return moved;
  };
  window.__svcCaptions = { set: (next) => layer.set(next) };
}
