// `svc captions transcribe [dir]`: the composition's speech as a JSON word list
// ([{text, start, end}], seconds), the file `svc render --captions` reads (issue 37). The sound is
// the mix svc renders; the recogniser is PocketSphinx with its English model, from the Debian
// packages pocketsphinx and pocketsphinx-en-us (src/engine/transcribe.ts). The list is written
// through a temp name and renamed, so it is whole or absent.
import { randomBytes } from "node:crypto";
import { rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { transcribeComposition, type Transcript } from "../engine/index";
import { printJson, runAction } from "./command";
import { addCompositionFlag, addVariablesFlags, readVariablesOption } from "./options";
import type { CliIo } from "./io";

export interface TranscribeCommandOptions {
  dir: string;
  composition: string;
  /** Where the word list goes (default: words.json in the project folder). */
  output?: string;
  variables?: Record<string, unknown>;
  json?: boolean;
  signal?: AbortSignal;
}

export async function runTranscribe(
  options: TranscribeCommandOptions,
  io: CliIo,
): Promise<Transcript & { outputPath: string }> {
  const transcript = await transcribeComposition({
    projectDir: options.dir,
    composition: options.composition,
    ...(options.variables ? { variables: options.variables } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const outputPath = resolve(options.output ?? join(options.dir, "words.json"));
  const partial = join(
    dirname(outputPath),
    `.${basename(outputPath)}.${randomBytes(4).toString("hex")}.partial`,
  );
  try {
    await writeFile(partial, JSON.stringify(transcript.words, null, 2) + "\n");
    await rename(partial, outputPath);
  } finally {
    await rm(partial, { force: true });
  }
  if (options.json) {
    printJson(io, {
      output_path: outputPath,
      words: transcript.words.length,
      duration_seconds: transcript.durationSeconds,
    });
  } else {
    const count = transcript.words.length;
    io.stdout.write(
      `${count} word${count === 1 ? "" : "s"} heard in ${transcript.durationSeconds} s of sound, written to ${outputPath}\n` +
        (count === 0
          ? "No speech was recognised: the recogniser knows US English speech only.\n"
          : `Check them, then render with: svc render ${options.dir} --captions ${outputPath}\n`),
    );
  }
  return { ...transcript, outputPath };
}

type TranscribeFlags = {
  composition: string;
  output?: string;
  variables?: string;
  variablesFile?: string;
  json?: boolean;
};

export function registerCaptionsCommands(program: Command, io: CliIo): void {
  const captions = program.command("captions").description("captions from a composition's sound");
  const command = captions
    .command("transcribe")
    .description(
      "write the composition's speech as a JSON word list for --captions (US English; needs pocketsphinx)",
    )
    .argument("[dir]", "project folder", ".");
  addCompositionFlag(command);
  addVariablesFlags(command, false)
    .option("-o, --output <file>", "where the word list goes (default: words.json in the project)")
    .option("--json", "print where it went and how many words as JSON on stdout")
    .action((dir: string, flags: TranscribeFlags) =>
      runAction(io, flags.json, (signal) =>
        runTranscribe(
          {
            dir,
            composition: flags.composition,
            ...(flags.output !== undefined ? { output: flags.output } : {}),
            ...(flags.json ? { json: true } : {}),
            variables: readVariablesOption(flags),
            signal,
          },
          io,
        ),
      ),
    );
}
