// `svc captions transcribe` through the real binary, PocketSphinx and FFmpeg (issue 37): flite
// (Debian) speaks a known sentence into a WAV that a composition plays from 0.5 s; the word list
// written holds most of its words in order, at rising times inside the sound, and reads as
// captions. Missing pocketsphinx or a silent composition are refused in words, with no file.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTimedWords } from "../engine/inspect/transcribe";
import { parseCaptions } from "../shared/captions";
import { runCli, tempDir } from "./testing/cloud-service";

const SENTENCE = "thank you very much for watching this video";
/** The speech starts this far into the composition. */
const OFFSET = 0.5;
const DURATION = 4;

let dir: string;
let project: string;

const composition = (audio: string) => `<!doctype html><html><body style="margin:0;background:#000">
<div id="root" data-composition-id="main" data-width="640" data-height="360" data-duration="${DURATION}">
${audio}</div></body></html>`;

beforeAll(async () => {
  dir = await tempDir("svc-transcribe-");
  project = join(dir, "project");
  await mkdir(project);
  // flite's "slt" voice at 16 kHz: clear enough for the en-us model to hear every word.
  execFileSync("flite", ["-voice", "slt", "-t", SENTENCE, "-o", join(project, "speech.wav")]);
  await writeFile(
    join(project, "index.html"),
    composition(`<audio src="speech.wav" data-start="${OFFSET}" data-volume="1"></audio>`),
  );
  await writeFile(join(project, "silent.html"), composition(""));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("svc captions transcribe", () => {
  it("reads PocketSphinx's timed words, leaving out fillers and pronunciation numbers", () => {
    const output = [
      "thank you",
      "<s> 0.090 0.160 1.000000",
      "thank 0.170 0.530 0.622473",
      "[NOISE] 0.530 0.540 0.1",
      "for(2) 1.170 1.370 0.608379",
      "<sil> 2.520 2.670 0.512335",
      "</s> 2.680 2.730 1.000000",
    ].join("\n");
    expect(parseTimedWords(output)).toEqual([
      { text: "thank", start: 0.17, end: 0.53 },
      { text: "for", start: 1.17, end: 1.37 },
    ]);
  });

  it("writes the spoken words with rising times inside the sound, a list --captions reads", async () => {
    const output = join(dir, "words.json");
    const run = await runCli(["captions", "transcribe", project, "-o", output, "--json"], {
      cwd: dir,
      env: {},
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ output_path: output, duration_seconds: 4 });
    const words = JSON.parse(readFileSync(output, "utf8")) as Array<{
      text: string;
      start: number;
      end: number;
    }>;
    const expected = SENTENCE.split(" ");
    // Most of the sentence's words, in its order (a recogniser may miss or mishear one).
    let next = 0;
    for (const word of words) {
      const at = expected.indexOf(word.text, next);
      if (at !== -1) next = at + 1;
    }
    const heard = words.filter((word) => expected.includes(word.text)).length;
    expect(heard, JSON.stringify(words)).toBeGreaterThanOrEqual(6);
    expect(next).toBeGreaterThanOrEqual(6);
    for (const [index, word] of words.entries()) {
      expect(word.start).toBeGreaterThanOrEqual(OFFSET - 0.05);
      expect(word.end).toBeGreaterThan(word.start);
      expect(word.end).toBeLessThanOrEqual(DURATION);
      if (index > 0) expect(word.start).toBeGreaterThanOrEqual(words[index - 1]!.end);
    }
    const parsed = parseCaptions(readFileSync(output, "utf8"), "words.json");
    expect(parsed.ok).toBe(true);
  });

  it("names the apt line when pocketsphinx is missing, and refuses a silent composition", async () => {
    const output = join(dir, "none.json");
    const missing = await runCli(["captions", "transcribe", project, "-o", output], {
      cwd: dir,
      env: { SVC_POCKETSPHINX: "svc-no-such-recogniser" },
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("not installed");
    expect(missing.stderr).toContain("apt-get install pocketsphinx pocketsphinx-en-us");
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    const silent = await runCli(
      ["captions", "transcribe", project, "-c", "silent.html", "-o", output],
      { cwd: dir, env: {} },
    );
    expect(silent.code).toBe(1);
    expect(silent.stderr).toContain("The composition has no sound to transcribe.");
    expect(existsSync(output)).toBe(false);
  });
});
