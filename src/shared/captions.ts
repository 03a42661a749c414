// Captions (issue 37): reading SRT, WebVTT and JSON word lists into one cue model, writing SRT and
// WebVTT back (sidecar files, soft subtitle tracks), the caption styles and the layer's input that
// renders, previews, the CLI, the API and the app share. Pure: no Node or DOM, so the page runtime,
// the main process, the service and the app all parse with this one module.
// Decisions:
// - Times are seconds rounded to whole milliseconds (both formats carry milliseconds), so a file
//   written by formatSrt/formatVtt reads back to the same cues.
// - A broken file is refused whole, with the first problem's line number: a render never shows
//   half of a file.
// - Cue text is plain text with "\n" between lines; SRT/VTT markup (<i>, <b>, <c.class>, <ruby>)
//   is dropped, `<v Name>` becomes the cue's voice and `<00:00:01.500>` inline timestamps become
//   word timings (karaoke).
// - A JSON word list (`[{text, start, end}]`, what speech-to-text tools write) is grouped into
//   cues at pauses, sentence ends and a reading-length limit.

import { z } from "zod";

export const CAPTION_FORMATS = ["srt", "vtt", "json"] as const;
export type CaptionFormat = (typeof CAPTION_FORMATS)[number];

export const CAPTION_STYLES = ["clean", "karaoke", "social", "band"] as const;
export type CaptionStyle = (typeof CAPTION_STYLES)[number];
export const DEFAULT_CAPTION_STYLE: CaptionStyle = "clean";

/** What each style looks like, in the creator's words (the app's style picker, `--help`). */
export const CAPTION_STYLE_LABELS: Record<CaptionStyle, { name: string; description: string }> = {
  clean: { name: "Clean", description: "A plain line at the bottom, with a soft shadow" },
  karaoke: { name: "Karaoke", description: "Each word lights up as it is spoken" },
  social: { name: "Social", description: "Big words in the middle, one to three at a time" },
  band: { name: "Band", description: "A boxed band across the lower part" },
};

/** Largest caption file read (characters): a feature film's subtitles are ~150 KB. */
export const CAPTIONS_MAX_CHARS = 2_000_000;
/** Most cues in one file. */
export const CAPTIONS_MAX_CUES = 20_000;

export interface CaptionWord {
  text: string;
  /** Seconds. */
  start: number;
  end: number;
}

export interface CaptionCue {
  /** Seconds; the cue is on screen while start <= t < end. */
  start: number;
  end: number;
  /** Plain text, lines separated by "\n". */
  text: string;
  /** WebVTT `<v Name>`. */
  voice?: string;
  /** Word timings (WebVTT inline timestamps, JSON word lists); karaoke uses them. */
  words?: CaptionWord[];
}

export interface CaptionTrack {
  cues: CaptionCue[];
}

export interface CaptionsProblem {
  code: "captions_invalid";
  /** 1-based line of the file where the problem is. */
  line: number;
  message: string;
  hint: string;
}

export type CaptionsParse =
  { ok: true; track: CaptionTrack } | { ok: false; error: CaptionsProblem };

/** The brand look a style takes when given (else the composition's CSS variables, else its own). */
export interface CaptionLook {
  /** CSS font family name, e.g. "Montserrat". */
  font?: string;
  /** Text colour (CSS colour). */
  color?: string;
  /** Highlight colour: the spoken word (karaoke), the current word (social). */
  accent?: string;
  /** Box colour of the band style. */
  background?: string;
}

/** What the page runtime draws: `window.__svcConfig.captions` (docs/composition-format.md). */
export interface PageCaptions {
  cues: CaptionCue[];
  style: CaptionStyle;
  look?: CaptionLook;
}

const problem = (line: number, message: string, hint: string): CaptionsParse => ({
  ok: false,
  error: { code: "captions_invalid", line, message: `Line ${line}: ${message}`, hint },
});

/** The format of a caption file by its name, else by its first characters. */
export function captionFormatOf(text: string, fileName?: string): CaptionFormat {
  const ext = fileName?.toLowerCase().match(/\.(srt|vtt|json)$/)?.[1];
  if (ext) return ext as CaptionFormat;
  const start = text.replace(/^\uFEFF/, "").trimStart();
  if (start.startsWith("WEBVTT")) return "vtt";
  if (start.startsWith("[") || start.startsWith("{")) return "json";
  return "srt";
}

/** Reads a caption file; the format comes from the file name or the content. */
export function parseCaptions(text: string, fileName?: string): CaptionsParse {
  if (text.length > CAPTIONS_MAX_CHARS) {
    return problem(
      1,
      `the file is larger than ${CAPTIONS_MAX_CHARS / 1_000_000} million characters.`,
      "Split the captions into shorter files, one per video.",
    );
  }
  const format = captionFormatOf(text, fileName);
  const result =
    format === "vtt" ? parseVtt(text) : format === "json" ? parseWordList(text) : parseSrt(text);
  if (!result.ok) return result;
  if (result.track.cues.length === 0) {
    return problem(
      1,
      "the file has no captions in it.",
      format === "json"
        ? 'Give a list of words like [{"text": "Hello", "start": 0.5, "end": 0.9}].'
        : "Add at least one cue: a timing line like 00:00:01,000 --> 00:00:02,500 followed by its text.",
    );
  }
  if (result.track.cues.length > CAPTIONS_MAX_CUES) {
    return problem(
      1,
      `the file has ${result.track.cues.length} captions; at most ${CAPTIONS_MAX_CUES} are read.`,
      "Split the captions into shorter files.",
    );
  }
  return result;
}

function splitLines(text: string): string[] {
  return text.replace(/^\uFEFF/, "").split(/\r\n|\r|\n/);
}

const roundMs = (seconds: number) => Math.round(seconds * 1000) / 1000;

/** `HH:MM:SS,mmm` (SRT, "," or ".") or `[HH:]MM:SS.mmm` (VTT); seconds, or undefined. */
function parseTimestamp(raw: string, format: "srt" | "vtt"): number | undefined {
  const pattern =
    format === "srt"
      ? /^(\d+):([0-5]\d):([0-5]\d)[,.](\d{3})$/
      : /^(?:(\d+):)?([0-5]\d):([0-5]\d)\.(\d{3})$/;
  const match = pattern.exec(raw.trim());
  if (!match) return undefined;
  const [, hours, minutes, seconds, millis] = match;
  return roundMs(
    Number(hours ?? 0) * 3600 + Number(minutes) * 60 + Number(seconds) + Number(millis) / 1000,
  );
}

const TIMING_HINT = {
  srt: "Write timings as 00:00:01,000 --> 00:00:02,500 (hours:minutes:seconds,milliseconds).",
  vtt: "Write timings as 00:00:01.000 --> 00:00:02.500 (hours optional, milliseconds after a dot).",
};

/** A timing line's two times, or the problem with it. */
function parseTiming(
  line: string,
  lineNumber: number,
  format: "srt" | "vtt",
): { start: number; end: number } | CaptionsParse {
  const [left, rest] = line.split("-->");
  if (rest === undefined) {
    return problem(
      lineNumber,
      `expected a timing line with "-->", found "${clip(line)}".`,
      TIMING_HINT[format],
    );
  }
  // VTT puts cue settings after the end time; SRT may too (X1:... coordinates): both are ignored.
  const endText = rest.trim().split(/\s+/)[0] ?? "";
  const start = parseTimestamp(left!, format);
  const end = parseTimestamp(endText, format);
  if (start === undefined || end === undefined) {
    const bad = start === undefined ? left!.trim() : endText;
    return problem(lineNumber, `"${clip(bad)}" is not a time.`, TIMING_HINT[format]);
  }
  if (end <= start) {
    return problem(
      lineNumber,
      `the caption ends (${formatClock(end, ".")}) before it starts (${formatClock(start, ".")}).`,
      "Make the second time later than the first.",
    );
  }
  return { start, end };
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** SRT markup svc drops: <i>, <b>, <u>, <font ...> and their closing tags. */
const SRT_TAGS = /<\/?(?:i|b|u|font)(?:\s[^>]*)?>/gi;

function parseSrt(text: string): CaptionsParse {
  const lines = splitLines(text);
  const cues: CaptionCue[] = [];
  let index = 0;
  while (index < lines.length) {
    if (lines[index]!.trim() === "") {
      index++;
      continue;
    }
    // A cue: an optional number, the timing line, then text up to a blank line.
    let timingIndex = index;
    if (/^\d+$/.test(lines[index]!.trim()) && !lines[index]!.includes("-->")) timingIndex++;
    const timingLine = lines[timingIndex];
    if (timingLine === undefined || !timingLine.includes("-->")) {
      return problem(
        (timingLine === undefined ? index : timingIndex) + 1,
        timingLine === undefined
          ? "the file ends after a caption number, without its timing line."
          : `expected a timing line with "-->", found "${clip(timingLine)}".`,
        "Each caption is a number, a timing line like 00:00:01,000 --> 00:00:02,500, its text, and a blank line.",
      );
    }
    const timing = parseTiming(timingLine, timingIndex + 1, "srt");
    if ("ok" in timing) return timing;
    const textLines: string[] = [];
    index = timingIndex + 1;
    while (index < lines.length && lines[index]!.trim() !== "") {
      if (lines[index]!.includes("-->")) {
        return problem(
          index + 1,
          "a timing line follows the caption text without a blank line before it.",
          "Put a blank line between captions.",
        );
      }
      textLines.push(lines[index]!.replace(SRT_TAGS, "").trim());
      index++;
    }
    const cueText = textLines.filter((line) => line !== "").join("\n");
    if (cueText === "") {
      return problem(
        timingIndex + 1,
        "this caption has no text.",
        "Write the caption's words on the line after its timing, or remove the caption.",
      );
    }
    cues.push({ ...timing, text: cueText });
  }
  return { ok: true, track: { cues } };
}

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  nbsp: "\u00a0",
  lrm: "\u200e",
  rlm: "\u200f",
  quot: '"',
  apos: "'",
};

function decodeEntities(text: string): string {
  return text.replace(
    /&(amp|lt|gt|nbsp|lrm|rlm|quot|apos);/g,
    (_, name: string) => ENTITIES[name]!,
  );
}

function parseVtt(text: string): CaptionsParse {
  const lines = splitLines(text);
  if (!/^WEBVTT(?:$|[ \t])/.test(lines[0] ?? "")) {
    return problem(
      1,
      'a WebVTT file must start with "WEBVTT".',
      "Put WEBVTT on the first line, or name the file .srt if it is SRT.",
    );
  }
  const cues: CaptionCue[] = [];
  let index = 1;
  // The header runs to the first blank line.
  while (index < lines.length && lines[index]!.trim() !== "") index++;
  while (index < lines.length) {
    if (lines[index]!.trim() === "") {
      index++;
      continue;
    }
    const blockStart = index;
    const first = lines[index]!;
    if (/^(NOTE|STYLE|REGION)(?:$|[ \t])/.test(first) && !first.includes("-->")) {
      while (index < lines.length && lines[index]!.trim() !== "") index++;
      continue;
    }
    // An optional cue identifier line, then the timing line.
    let timingIndex = index;
    if (!first.includes("-->")) timingIndex++;
    const timingLine = lines[timingIndex];
    if (timingLine === undefined || !timingLine.includes("-->")) {
      return problem(
        (timingLine === undefined || timingLine.trim() === "" ? blockStart : timingIndex) + 1,
        `expected a timing line with "-->" after "${clip(first)}".`,
        "Each cue is an optional name, a timing line like 00:00:01.000 --> 00:00:02.500, then its text.",
      );
    }
    const timing = parseTiming(timingLine, timingIndex + 1, "vtt");
    if ("ok" in timing) return timing;
    const raw: string[] = [];
    index = timingIndex + 1;
    while (index < lines.length && lines[index]!.trim() !== "") {
      if (lines[index]!.includes("-->")) {
        return problem(
          index + 1,
          "a timing line follows the cue text without a blank line before it.",
          "Put a blank line between cues.",
        );
      }
      raw.push(lines[index]!);
      index++;
    }
    const cue = readVttPayload(raw.join("\n"), timing, timingIndex + 2);
    if ("ok" in cue) return cue;
    if (cue.text === "") {
      return problem(
        timingIndex + 1,
        "this cue has no text.",
        "Write the cue's words on the line after its timing, or remove the cue.",
      );
    }
    cues.push(cue);
  }
  return { ok: true, track: { cues } };
}

/** A cue's text: voice, inline timestamps (word timings) and plain text without markup. */
function readVttPayload(
  payload: string,
  timing: { start: number; end: number },
  firstLine: number,
): CaptionCue | CaptionsParse {
  let voice: string | undefined;
  let text = "";
  const segments: Array<{ start: number; text: string }> = [{ start: timing.start, text: "" }];
  const tag = /<([^>]*)>/g;
  let last = 0;
  let match: RegExpExecArray | null;
  const addText = (chunk: string) => {
    const plain = decodeEntities(chunk);
    text += plain;
    segments[segments.length - 1]!.text += plain;
  };
  while ((match = tag.exec(payload)) !== null) {
    addText(payload.slice(last, match.index));
    last = match.index + match[0].length;
    const inside = match[1]!.trim();
    const voiceMatch = /^v(?:\.[^\s]*)?\s+(.+)$/.exec(inside);
    if (voiceMatch) {
      voice ??= voiceMatch[1]!.trim();
      continue;
    }
    if (/^\d/.test(inside)) {
      const at = parseTimestamp(inside, "vtt");
      const line = firstLine + (payload.slice(0, match.index).match(/\n/g)?.length ?? 0);
      if (at === undefined) {
        return problem(line, `"<${clip(inside)}>" is not a time.`, TIMING_HINT.vtt);
      }
      if (at < timing.start || at > timing.end) {
        return problem(
          line,
          `the word time ${formatClock(at, ".")} is outside its cue (${formatClock(timing.start, ".")} to ${formatClock(timing.end, ".")}).`,
          "Word times inside a cue must fall between the cue's start and end.",
        );
      }
      segments.push({ start: at, text: "" });
    }
    // Any other tag (<c>, <i>, <b>, <u>, <ruby>, <rt>, <lang>, closing tags) is markup: dropped.
  }
  addText(payload.slice(last));
  const lines = text.split("\n").map((line) => line.trim());
  const cue: CaptionCue = { ...timing, text: lines.filter((line) => line !== "").join("\n") };
  if (voice) cue.voice = voice;
  if (segments.length > 1) {
    const words: CaptionWord[] = [];
    segments.forEach((segment, at) => {
      const end = segments[at + 1]?.start ?? timing.end;
      for (const word of segment.text.split(/\s+/)) {
        if (word !== "") words.push({ text: word, start: segment.start, end });
      }
    });
    if (words.length > 0) cue.words = words;
  }
  return cue;
}

/** A cue of a word list ends at a pause this long (seconds)... */
const WORD_GAP_SECONDS = 0.8;
/** ...or when it would read longer than this many characters... */
const WORD_CUE_MAX_CHARS = 42;
/** ...or last longer than this (seconds). */
const WORD_CUE_MAX_SECONDS = 4;

/** Line numbers of each top-level array element's start, for messages about one word. */
function elementLines(text: string): number[] {
  const lines: number[] = [];
  let depth = 0;
  let line = 1;
  let inString = false;
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!;
    if (char === "\n") line++;
    if (inString) {
      if (char === "\\") at++;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === "[" || char === "{") {
      if (depth === 1) lines.push(line);
      depth++;
    } else if (char === "]" || char === "}") depth--;
  }
  return lines;
}

function parseWordList(text: string): CaptionsParse {
  const source = text.replace(/^\uFEFF/, "");
  let parsed: unknown;
  try {
    parsed = JSON.parse(source);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const position = /position (\d+)/.exec(message);
    const line = position ? source.slice(0, Number(position[1])).split("\n").length : 1;
    return problem(
      line,
      `the file is not valid JSON (${message.replace(/\s*\(line \d+ column \d+\)/, "")}).`,
      'A word list is JSON like [{"text": "Hello", "start": 0.5, "end": 0.9}].',
    );
  }
  const list = Array.isArray(parsed)
    ? parsed
    : parsed && typeof parsed === "object" && Array.isArray((parsed as { words?: unknown }).words)
      ? (parsed as { words: unknown[] }).words
      : undefined;
  if (!list) {
    return problem(
      1,
      'expected a list of words, or an object with a "words" list.',
      'A word list is JSON like [{"text": "Hello", "start": 0.5, "end": 0.9}].',
    );
  }
  const lines = Array.isArray(parsed) ? elementLines(source) : [];
  const words: CaptionWord[] = [];
  for (const [at, item] of list.entries()) {
    const line = lines[at] ?? 1;
    const entry = item as { text?: unknown; word?: unknown; start?: unknown; end?: unknown };
    const wordText = typeof entry?.text === "string" ? entry.text : entry?.word;
    if (
      typeof wordText !== "string" ||
      typeof entry.start !== "number" ||
      typeof entry.end !== "number"
    ) {
      return problem(
        line,
        `word ${at + 1} needs "text" (a string) and "start" and "end" (numbers of seconds).`,
        'Write each word as {"text": "Hello", "start": 0.5, "end": 0.9}.',
      );
    }
    if (!Number.isFinite(entry.start) || entry.start < 0 || !(entry.end > entry.start)) {
      return problem(
        line,
        `word ${at + 1} ("${clip(wordText)}") ends at ${entry.end} s, not after its start ${entry.start} s.`,
        "Give each word a start of 0 or more and an end after its start, in seconds.",
      );
    }
    const trimmed = wordText.trim();
    if (trimmed !== "")
      words.push({ text: trimmed, start: roundMs(entry.start), end: roundMs(entry.end) });
  }
  return { ok: true, track: { cues: groupWords(words) } };
}

/** Words into cues: a new cue at a pause, after a sentence end, or at the reading length. */
export function groupWords(words: CaptionWord[]): CaptionCue[] {
  const sorted = [...words].sort((a, b) => a.start - b.start);
  const cues: CaptionCue[] = [];
  let current: CaptionWord[] = [];
  const flush = () => {
    if (current.length === 0) return;
    const first = current[0]!;
    const end = Math.max(...current.map((word) => word.end));
    cues.push({ start: first.start, end, text: joinWords(current), words: current });
    current = [];
  };
  for (const word of sorted) {
    const previous = current[current.length - 1];
    if (previous) {
      const length = joinWords([...current, word]).length;
      if (
        word.start - previous.end >= WORD_GAP_SECONDS ||
        /[.!?。！？]$/.test(previous.text) ||
        length > WORD_CUE_MAX_CHARS ||
        word.end - current[0]!.start > WORD_CUE_MAX_SECONDS
      ) {
        flush();
      }
    }
    current.push(word);
  }
  flush();
  // Cues of one list do not overlap: one that runs into the next ends where the next starts.
  for (let at = 0; at + 1 < cues.length; at++) {
    const cue = cues[at]!;
    const next = cues[at + 1]!;
    if (cue.end > next.start && next.start > cue.start) cue.end = next.start;
  }
  return cues;
}

/** Words joined as written: no spaces between CJK words (speech-to-text gives them one by one). */
function joinWords(words: CaptionWord[]): string {
  let text = "";
  for (const word of words) {
    const glue = text === "" || (isCjk(text.at(-1)!) && isCjk(word.text[0]!)) ? "" : " ";
    text += glue + word.text;
  }
  return text;
}

function isCjk(char: string): boolean {
  return /[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]/.test(char);
}

/** Seconds as `HH:MM:SS<sep>mmm`. */
export function formatClock(seconds: number, separator: "," | "."): string {
  const total = Math.round(seconds * 1000);
  const ms = total % 1000;
  const s = Math.floor(total / 1000) % 60;
  const m = Math.floor(total / 60000) % 60;
  const h = Math.floor(total / 3600000);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(h)}:${two(m)}:${two(s)}${separator}${String(ms).padStart(3, "0")}`;
}

/** The track as SRT (sidecar files, mov_text tracks). */
export function formatSrt(track: CaptionTrack): string {
  return track.cues
    .map(
      (cue, at) =>
        `${at + 1}\n${formatClock(cue.start, ",")} --> ${formatClock(cue.end, ",")}\n${cue.text}\n`,
    )
    .join("\n");
}

const escapeVtt = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The track as WebVTT, with voices and word timings (sidecar files, WebM subtitle tracks). */
export function formatVtt(track: CaptionTrack): string {
  const blocks = track.cues.map((cue) => {
    let body: string;
    if (cue.words && cue.words.length > 0 && cue.words.every((word) => !word.text.includes("\n"))) {
      // Words keep their lines: walk the text and put each word's time before it.
      body = "";
      let rest = cue.text;
      for (const [at, word] of cue.words.entries()) {
        const found = rest.indexOf(word.text);
        if (found < 0) {
          body = escapeVtt(cue.text);
          break;
        }
        body += escapeVtt(rest.slice(0, found));
        body += `<${formatClock(word.start, ".")}>`;
        body += escapeVtt(word.text);
        rest = rest.slice(found + word.text.length);
        if (at === cue.words.length - 1) body += escapeVtt(rest);
      }
    } else {
      body = escapeVtt(cue.text);
    }
    const voice = cue.voice ? `<v ${cue.voice.replace(/>/g, "")}>` : "";
    return `${formatClock(cue.start, ".")} --> ${formatClock(cue.end, ".")}\n${voice}${body}\n`;
  });
  return `WEBVTT\n\n${blocks.join("\n")}`;
}

/** The cues on screen at time t (seconds). */
export function activeCues(cues: readonly CaptionCue[], t: number): CaptionCue[] {
  // A microsecond of slack: frame times (n / fps) are not exact in binary.
  const at = t + 1e-6;
  return cues.filter((cue) => cue.start <= at && at < cue.end);
}

/**
 * A cue's words with times: its own (inline timestamps, word lists), else its text split into
 * words (Intl.Segmenter, so Japanese and Chinese split too) with the cue's time shared out by
 * length. Punctuation and spaces stay with the word before them.
 */
export function timedWords(cue: CaptionCue): CaptionWord[] {
  if (cue.words && cue.words.length > 0) return cue.words;
  const pieces: string[] = [];
  const segmenter = new Intl.Segmenter(undefined, { granularity: "word" });
  for (const line of cue.text.split("\n")) {
    for (const segment of segmenter.segment(line)) {
      const piece = segment.segment;
      if (piece.trim() === "") continue;
      if (!segment.isWordLike && pieces.length > 0) pieces[pieces.length - 1] += piece;
      else pieces.push(piece);
    }
  }
  const total = pieces.reduce((sum, piece) => sum + piece.length, 0) || 1;
  const span = cue.end - cue.start;
  let start = cue.start;
  return pieces.map((piece) => {
    const end = start + (span * piece.length) / total;
    const word = { text: piece, start, end };
    start = end;
    return word;
  });
}

/** Groups of one to `most` words for the social style; a group shows until the next starts. */
export function wordGroups(cue: CaptionCue, most = 3): CaptionWord[] {
  const words = timedWords(cue);
  const groups: CaptionWord[] = [];
  for (let at = 0; at < words.length; at += most) {
    const slice = words.slice(at, at + most);
    groups.push({
      text: joinWords(slice),
      start: slice[0]!.start,
      end: words[at + most]?.start ?? cue.end,
    });
  }
  return groups;
}

/** A CSS colour as the look takes it: #rgb..#rrggbbaa, rgb()/rgba()/hsl(), or a colour name. */
const CSS_COLOR = /^(#[0-9a-f]{3,8}|(rgb|rgba|hsl|hsla)\([0-9.,%\s/]+\)|[a-z]{3,20})$/i;
/** A font family name: letters, digits, spaces and dashes (it goes into CSS). */
const FONT_NAME = /^[\p{L}\p{N} _-]{1,64}$/u;

const colorField = (name: string) =>
  z
    .string()
    .regex(CSS_COLOR, {
      error: `${name} must be a CSS colour such as #ffcc00, rgb(255, 204, 0) or white`,
    })
    .optional();

export const captionLookSchema = z.strictObject({
  font: z
    .string()
    .regex(FONT_NAME, { error: "font must be a font family name such as Montserrat" })
    .optional(),
  color: colorField("color"),
  accent: colorField("accent"),
  background: colorField("background"),
});

export const captionStyleSchema = z.enum(CAPTION_STYLES, {
  error: `caption style must be one of ${CAPTION_STYLES.join(", ")}`,
});

const timeSchema = z.number().min(0).max(360_000);

/** One cue on the wire (the app sends the cues the creator edited). */
export const captionCueSchema = z
  .strictObject({
    start: timeSchema,
    end: timeSchema,
    text: z.string().trim().min(1, { error: "a caption needs some text" }).max(1000),
    voice: z.string().max(200).optional(),
    words: z
      .array(
        z.strictObject({ text: z.string().min(1).max(200), start: timeSchema, end: timeSchema }),
      )
      .max(500)
      .optional(),
  })
  .refine((cue) => cue.end > cue.start, {
    error: "a caption must end after it starts",
    path: ["end"],
  });

/**
 * `captions` on a /v3 render request (and the app's queued renders): a caption file inside the
 * project zip (`file`), read and checked by the service before the render is queued, or the cues
 * themselves (`cues`: what the app sends after the creator edited them).
 */
export const captionsRequestSchema = z
  .strictObject({
    /** Path of an .srt, .vtt or .json word list inside the project. */
    file: z.string().min(1).max(1024).optional(),
    cues: z.array(captionCueSchema).min(1).max(CAPTIONS_MAX_CUES).optional(),
    style: captionStyleSchema.default(DEFAULT_CAPTION_STYLE),
    look: captionLookSchema.optional(),
    /** Draw them into the picture (default true). */
    burn_in: z.boolean().default(true),
    /** Also add a subtitle stream viewers can turn off (mp4/mov: mov_text, webm: WebVTT). */
    soft_track: z.boolean().default(false),
  })
  .refine((captions) => (captions.file === undefined) !== (captions.cues === undefined), {
    error: "give captions either a file in the project or cues, one of the two",
    path: ["file"],
  });
export type CaptionsRequest = z.input<typeof captionsRequestSchema>;
