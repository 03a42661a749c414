import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  activeCues,
  formatSrt,
  formatVtt,
  parseCaptions,
  timedWords,
  wordGroups,
  type CaptionCue,
  type CaptionTrack,
} from "./captions";

// Text a caption line may hold: Latin, Arabic, Japanese, digits and punctuation; markup
// characters appear only where the format escapes them (VTT).
const LINE_CHARS = [..."abcXYZ019 .,!?'-éالسلام日本語です。"];
const line = (chars: string[]) =>
  fc
    .array(fc.constantFrom(...chars), { minLength: 1, maxLength: 30 })
    .map((list) => list.join("").trim())
    .filter((text) => text !== "" && !text.includes("-->"));

const cueArb = (chars: string[]) =>
  fc
    .record({
      startMs: fc.integer({ min: 0, max: 36_000_000 }),
      lengthMs: fc.integer({ min: 1, max: 600_000 }),
      lines: fc.array(line(chars), { minLength: 1, maxLength: 3 }),
    })
    .map(({ startMs, lengthMs, lines }): CaptionCue => ({
      start: startMs / 1000,
      end: (startMs + lengthMs) / 1000,
      text: lines.join("\n"),
    }));

const trackArb = (chars: string[]) =>
  fc.array(cueArb(chars), { minLength: 1, maxLength: 12 }).map((cues): CaptionTrack => ({ cues }));

function parsed(text: string, name?: string): CaptionTrack {
  const result = parseCaptions(text, name);
  if (!result.ok) throw new Error(result.error.message);
  return result.track;
}

describe("caption files round-trip", () => {
  it("any valid SRT reads back to the same cues", () => {
    fc.assert(
      fc.property(trackArb(LINE_CHARS), (track) => {
        expect(parsed(formatSrt(track), "a.srt")).toEqual(track);
      }),
    );
  });

  it("any valid WebVTT reads back to the same cues, markup characters included", () => {
    fc.assert(
      fc.property(trackArb([...LINE_CHARS, "<", ">", "&"]), (track) => {
        expect(parsed(formatVtt(track), "a.vtt")).toEqual(track);
      }),
    );
  });

  it("WebVTT voices and word timings round-trip", () => {
    const words = fc
      .array(fc.stringMatching(/^[a-z]{1,8}$/), { minLength: 1, maxLength: 6 })
      .chain((texts) =>
        fc
          .array(fc.integer({ min: 1, max: 2000 }), {
            minLength: texts.length,
            maxLength: texts.length,
          })
          .map((gaps) => ({ texts, gaps })),
      );
    fc.assert(
      fc.property(words, fc.integer({ min: 0, max: 100_000 }), ({ texts, gaps }, startMs) => {
        let at = startMs;
        const times = gaps.map((gap) => (at += gap));
        const end = (at + 500) / 1000;
        const cueWords = texts.map((text, i) => ({
          text,
          start: i === 0 ? startMs / 1000 : times[i - 1]! / 1000,
          end: i + 1 < texts.length ? times[i]! / 1000 : end,
        }));
        const cue: CaptionCue = {
          start: startMs / 1000,
          end,
          text: texts.join(" "),
          voice: "Ana",
          words: cueWords,
        };
        expect(parsed(formatVtt({ cues: [cue] }), "w.vtt")).toEqual({ cues: [cue] });
      }),
    );
  });
});

describe("broken caption files are refused with a line number", () => {
  it("a bad time anywhere names its line", () => {
    fc.assert(
      fc.property(
        trackArb(LINE_CHARS),
        fc.nat(),
        fc.constantFrom("srt", "vtt"),
        (track, pick, format) => {
          const text = format === "srt" ? formatSrt(track) : formatVtt(track);
          const lines = text.split("\n");
          const timingLines = lines.flatMap((l, i) => (l.includes("-->") ? [i] : []));
          const target = timingLines[pick % timingLines.length]!;
          lines[target] = lines[target]!.replace(/\d\d:\d\d([,.])/, "99:7x$1");
          const result = parseCaptions(lines.join("\n"), `x.${format}`);
          expect(result.ok).toBe(false);
          if (!result.ok) {
            expect(result.error.line).toBe(target + 1);
            expect(result.error.message).toMatch(new RegExp(`^Line ${target + 1}: `));
          }
        },
      ),
    );
  });

  it("an end before the start is refused", () => {
    const result = parseCaptions("1\n00:00:02,000 --> 00:00:01,000\nHi\n", "a.srt");
    expect(result).toMatchObject({ ok: false, error: { line: 2 } });
    if (!result.ok) expect(result.error.message).toContain("ends");
  });

  it("a cue without text, a missing WEBVTT, an empty file", () => {
    expect(parseCaptions("1\n00:00:01,000 --> 00:00:02,000\n\n", "a.srt")).toMatchObject({
      ok: false,
      error: { line: 2 },
    });
    expect(parseCaptions("00:01.000 --> 00:02.000\nHi\n", "a.vtt")).toMatchObject({
      ok: false,
      error: { line: 1 },
    });
    expect(parseCaptions("\n\n", "a.srt")).toMatchObject({ ok: false });
  });

  it("a word list with a bad word names the word's line", () => {
    const text = '[\n  {"text": "Hi", "start": 0, "end": 0.5},\n  {"text": "there", "start": 1}\n]';
    const result = parseCaptions(text, "words.json");
    expect(result).toMatchObject({ ok: false, error: { line: 3 } });
    const broken = parseCaptions('[\n{"text": "Hi", "start": 0,\n', "words.json");
    expect(broken.ok).toBe(false);
  });
});

describe("reading what editors write", () => {
  it("WebVTT cue settings, ids, notes, voices, markup and entities", () => {
    const vtt = [
      "WEBVTT - made by an editor",
      "",
      "NOTE this is a note",
      "",
      "STYLE",
      "::cue { color: red }",
      "",
      "intro",
      "00:01.500 --> 00:03.000 align:start line:80%",
      "<v.loud Roger Bingham><i>We are</i> &amp; <c.yellow>here</c>",
      "",
      "01:00:00.000 --> 01:00:01.000",
      "Tom <00:00:00.000>",
    ];
    const track = parsed(vtt.slice(0, 11).join("\n"));
    expect(track.cues).toEqual([
      { start: 1.5, end: 3, text: "We are & here", voice: "Roger Bingham" },
    ]);
    const outside = parseCaptions(vtt.join("\n"));
    expect(outside).toMatchObject({ ok: false, error: { line: 13 } });
  });

  it("SRT with CRLF, a BOM, markup and dotted milliseconds", () => {
    const srt = "\uFEFF1\r\n00:00:01.000 --> 00:00:02,000\r\n<i>Hello</i>\r\n\r\n";
    expect(parsed(srt, "a.srt").cues).toEqual([{ start: 1, end: 2, text: "Hello" }]);
  });

  it("a word list becomes cues at pauses and sentence ends", () => {
    const words = [
      { text: "Hello", start: 0, end: 0.4 },
      { text: "world.", start: 0.4, end: 0.9 },
      { text: "Next", start: 1.0, end: 1.3 },
      { text: "one", start: 3.0, end: 3.4 },
    ];
    const cues = parsed(JSON.stringify(words), "w.json").cues;
    expect(cues.map((cue) => cue.text)).toEqual(["Hello world.", "Next", "one"]);
    expect(cues[0]!.words).toHaveLength(2);
  });
});

describe("timing on screen", () => {
  it("a cue is on from its start frame to the frame before its end", () => {
    const cues: CaptionCue[] = [{ start: 0.1, end: 0.2, text: "a" }];
    const fps = 30;
    const on = Array.from({ length: 10 }, (_, frame) => activeCues(cues, frame / fps).length > 0);
    expect(on).toEqual([false, false, false, true, true, true, false, false, false, false]);
  });

  it("words without times share the cue's time; social groups hold one to three words", () => {
    const cue: CaptionCue = { start: 0, end: 4, text: "one two three four five" };
    const words = timedWords(cue);
    expect(words.map((word) => word.text)).toEqual(["one", "two", "three", "four", "five"]);
    expect(words[0]!.start).toBe(0);
    expect(words.at(-1)!.end).toBeCloseTo(4);
    const groups = wordGroups(cue);
    expect(groups.map((group) => group.text)).toEqual(["one two three", "four five"]);
    expect(groups[1]!.end).toBe(4);
    const japanese = timedWords({ start: 0, end: 1, text: "今日はいい天気です。" });
    expect(japanese.length).toBeGreaterThan(1);
    expect(japanese.map((word) => word.text).join("")).toBe("今日はいい天気です。");
  });
});
