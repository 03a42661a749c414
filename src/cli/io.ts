// What a command runs with: its output streams, its input, its environment and the exit code it
// leaves. main() hands every command the process's own (processIo); tests hand them a recording
// one (recordingIo), so no test patches process.stdout or process.env, and two commands can run
// in one process side by side.

export interface OutputStream {
  write(text: string): unknown;
  /** A terminal: progress is redrawn in place and prompts can be shown. */
  isTTY?: boolean;
}

export interface InputStream extends AsyncIterable<Buffer | string> {
  isTTY?: boolean;
  setRawMode?(raw: boolean): unknown;
  on(event: "data", listener: (chunk: Buffer) => void): unknown;
  off(event: "data", listener: (chunk: Buffer) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  stdin: InputStream;
  env: NodeJS.ProcessEnv;
  /** Set by a command that fails without throwing (e.g. a dry run over the upload limit). */
  exitCode: number;
}

export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin as unknown as InputStream,
    env: process.env,
    exitCode: 0,
  };
}

/** An IO whose output is kept in strings, for running commands inside a test. */
export function recordingIo(
  env: NodeJS.ProcessEnv,
  stdin: InputStream = emptyInput(),
): CliIo & { out(): string; err(): string } {
  let out = "";
  let err = "";
  return {
    stdout: { write: (text: string) => (out += text) },
    stderr: { write: (text: string) => (err += text) },
    stdin,
    env,
    exitCode: 0,
    out: () => out,
    err: () => err,
  };
}

function emptyInput(): InputStream {
  return {
    isTTY: false,
    async *[Symbol.asyncIterator]() {},
    on: () => undefined,
    off: () => undefined,
    resume: () => undefined,
    pause: () => undefined,
  };
}

/** Reads a line from the terminal without echoing it (Ctrl+C rejects with `interrupted()`). */
export function promptHidden(
  io: CliIo,
  question: string,
  interrupted: () => Error,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = io.stdin;
    // Raw mode (no echo) before the question shows, so a key typed the moment it appears is
    // never echoed, however late this process is scheduled.
    stdin.setRawMode?.(true);
    io.stderr.write(question);
    let value = "";
    const finish = (error?: Error) => {
      stdin.setRawMode?.(false);
      stdin.pause();
      stdin.off("data", onData);
      io.stderr.write("\n");
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString("utf8")) {
        if (char === "\r" || char === "\n") return finish();
        if (char === "\u0003") return finish(interrupted());
        if (char === "\u007f" || char === "\b") value = value.slice(0, -1);
        else value += char;
      }
    };
    stdin.resume();
    stdin.on("data", onData);
  });
}

/** Everything piped to stdin, as text. */
export async function readPipedInput(io: CliIo): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}
