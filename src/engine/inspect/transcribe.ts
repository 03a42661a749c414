// Speech to a word list (issue 37, `svc captions transcribe`): the composition's sound, mixed as a
// render mixes it (the page's declared audio, placed and mixed by the same filter graph, with the
// maintained FFmpeg that decodes customers' media), made 16 kHz mono, then recognised by
// PocketSphinx with its US English model, both Debian packages (pocketsphinx, pocketsphinx-en-us):
// a model that ships inside a package, nothing fetched at run time. The result is the JSON word
// list `--captions` reads: [{text, start, end}] in seconds on the composition's timeline.
//
// Debian 12 ships PocketSphinx 5prealpha, whose `pocketsphinx_continuous -time yes` prints each
// utterance's words with start and end times; fillers (<s>, <sil>, [NOISE]) are left out and
// alternative pronunciations ("read(2)") keep their word.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join, sep } from "node:path";
import type { CaptionWord } from "../../shared/captions";
import { runFfmpeg } from "../ffmpeg/encode";
import { cancelledError, EngineError } from "../errors";
import { resolveMediaFfmpeg } from "../ffmpeg/ffmpeg";
import { audioMixArgs } from "../ffmpeg/ffmpeg-args";
import { pageAudio } from "../stages/render-finish";
import { prepareRender } from "../stages/render-prepare";
import { withRenderRun, type PageInfo } from "../stages/render-run";
import type { RenderCompositionOptions } from "../types";

/** What the recogniser is given: 16 kHz mono, the rate the en-us model was trained at. */
export const SPEECH_SAMPLE_RATE = 16_000;
/** The apt line that installs the recogniser and its model (Debian, Ubuntu). */
export const TRANSCRIBER_INSTALL = "sudo apt-get install pocketsphinx pocketsphinx-en-us";
/** Where pocketsphinx-en-us puts its model; SVC_POCKETSPHINX_MODEL may name another folder. */
const DEFAULT_MODEL = "/usr/share/pocketsphinx/model/en-us";

export type TranscribeOptions = Pick<
  RenderCompositionOptions,
  "projectDir" | "composition" | "variables" | "allowNetwork" | "readyTimeoutSeconds" | "signal"
>;

export interface Transcript {
  words: CaptionWord[];
  /** The composition's length in seconds (every word lies inside it). */
  durationSeconds: number;
}

/** The composition's sound recognised as words with their times. */
export async function transcribeComposition(options: TranscribeOptions): Promise<Transcript> {
  // Both checked before a browser starts: a missing package is the likeliest mistake.
  const recogniser = findRecogniser();
  const model = findModel();
  const workDir = await mkdtemp(join(tmpdir(), "svc-transcribe-"));
  try {
    const wav = join(workDir, "speech.wav");
    const { durationSeconds } = await compositionSound(options, wav);
    const words = await recognise(recogniser, wav, model, options.signal);
    return {
      words: words.filter((word) => word.start < durationSeconds),
      durationSeconds,
    };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/** Writes the composition's mixed sound to `wav` (16 kHz mono); fails when it has none. */
export async function compositionSound(
  options: TranscribeOptions,
  wav: string,
): Promise<{ durationSeconds: number }> {
  const { signal } = options;
  if (signal?.aborted) throw cancelledError();
  const prepared = await prepareRender({ ...options, fps: 1, quality: "draft" });
  return withRenderRun(prepared, options, async (run) => {
    const page = await run.openCapturePage();
    const info = await page.evaluate<PageInfo>("window.__svc.info()");
    const audio = await pageAudio(run, page);
    run.closePages();
    if (audio.length === 0) {
      throw new EngineError(
        "no_audio",
        "The composition has no sound to transcribe.",
        "Add an <audio> element with the speech (or a <video> with sound) to the composition.",
      );
    }
    const ffmpeg = await resolveMediaFfmpeg();
    await runFfmpeg(
      ffmpeg.path,
      audioMixArgs({
        audio,
        durationSeconds: info.duration,
        output: wav,
        sampleRate: SPEECH_SAMPLE_RATE,
      }),
      signal,
    );
    return { durationSeconds: info.duration };
  });
}

/** The recogniser's path: SVC_POCKETSPHINX, or pocketsphinx_continuous on PATH. */
function findRecogniser(): string {
  const named = process.env.SVC_POCKETSPHINX?.trim() || "pocketsphinx_continuous";
  const found = named.includes(sep)
    ? existsSync(named)
      ? named
      : undefined
    : (process.env.PATH ?? "")
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, named))
        .find((path) => existsSync(path));
  if (!found) {
    throw new EngineError(
      "transcriber_not_found",
      `The speech recogniser ${named} (PocketSphinx) is not installed.`,
      `Install it with: ${TRANSCRIBER_INSTALL}`,
    );
  }
  return found;
}

function findModel(): string {
  const model = process.env.SVC_POCKETSPHINX_MODEL?.trim() || DEFAULT_MODEL;
  if (!existsSync(join(model, "en-us", "mdef")) && !existsSync(join(model, "mdef"))) {
    throw new EngineError(
      "transcriber_not_found",
      `The English speech model is not installed (no model in ${model}).`,
      `Install it with: ${TRANSCRIBER_INSTALL}`,
    );
  }
  return model;
}

/** The model's files: the acoustic model, the language model and the pronouncing dictionary. */
function modelArgs(model: string): string[] {
  const hmm = existsSync(join(model, "en-us", "mdef")) ? join(model, "en-us") : model;
  const lm = join(model, "en-us.lm.bin");
  const dict = join(model, "cmudict-en-us.dict");
  return [
    ...["-hmm", hmm],
    ...(existsSync(lm) ? ["-lm", lm] : []),
    ...(existsSync(dict) ? ["-dict", dict] : []),
  ];
}

/** Runs pocketsphinx_continuous on a 16 kHz mono WAV and reads its timed words. */
export function recognise(
  command: string,
  wav: string,
  model: string,
  signal?: AbortSignal,
): Promise<CaptionWord[]> {
  const args = [
    ...["-infile", wav, "-time", "yes", "-samprate", String(SPEECH_SAMPLE_RATE)],
    ...modelArgs(model),
    ...["-logfn", "/dev/null"],
  ];
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cancelledError());
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (stdout += text));
    child.stderr
      .setEncoding("utf8")
      .on("data", (text: string) => (stderr = (stderr + text).slice(-4000)));
    const onAbort = () => child.kill("SIGKILL");
    signal?.addEventListener("abort", onAbort, { once: true });
    child.once("error", (error: NodeJS.ErrnoException) => {
      signal?.removeEventListener("abort", onAbort);
      reject(
        error.code === "ENOENT"
          ? new EngineError(
              "transcriber_not_found",
              `The speech recogniser ${command} is not installed.`,
              `Install it with: ${TRANSCRIBER_INSTALL}`,
            )
          : new EngineError("transcribe_failed", `${command} could not start: ${error.message}`),
      );
    });
    child.once("close", (code) => {
      signal?.removeEventListener("abort", onAbort);
      if (signal?.aborted) return reject(cancelledError());
      if (code !== 0) {
        const reason = stderr.trim().split("\n").slice(-3).join(" ") || `exit ${code}`;
        return reject(
          new EngineError("transcribe_failed", `The speech recogniser failed: ${reason}`),
        );
      }
      resolve(parseTimedWords(stdout));
    });
  });
}

/** Word lines of `-time yes` output: `word start end confidence`; fillers are left out. */
export function parseTimedWords(output: string): CaptionWord[] {
  const words: CaptionWord[] = [];
  for (const line of output.split("\n")) {
    const match = /^(\S+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?) (\S+)$/.exec(line.trim());
    if (!match) continue;
    const token = match[1]!;
    if (/^(<.*>|\[.*\]|\+\+.*\+\+)$/.test(token)) continue;
    const text = token.replace(/\(\d+\)$/, "");
    const start = Number(match[2]);
    const end = Number(match[3]);
    if (text === "" || !(end > start)) continue;
    words.push({ text, start, end });
  }
  return words.sort((a, b) => a.start - b.start);
}
