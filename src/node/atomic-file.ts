// Small state and secret files (settings, the render queue, credentials) are written atomically: a
// temp file (0600) in the same folder, then rename, so a crash or SIGKILL mid-write leaves the
// previous version, never half a file. Writes to one file through a JsonFileWriter are serialised
// so a slow write cannot land after a newer one.
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** The parsed JSON of `file`, or undefined when it is missing or not JSON. */
export async function readJsonFile(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as unknown;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
}

export async function writeJsonFileAtomic(file: string, value: unknown): Promise<void> {
  await writeFileAtomic(file, jsonText(value));
}

/**
 * Replaces `file` with `text`: the folder is created 0700 when missing, the file is 0600 (it may
 * hold a secret; chmod after writing, since an umask could have widened a fresh file).
 */
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temp, text, { mode: 0o600 });
    await chmod(temp, 0o600);
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Serialises the writes of one file; `write` returns when this value (or a newer one) is on disk. */
export class JsonFileWriter {
  private chain: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  write(value: unknown): Promise<void> {
    // Snapshot now: the caller may change the object before the queued write runs.
    const text = jsonText(value);
    const next = this.chain.then(() => writeFileAtomic(this.file, text));
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Resolves when every write queued so far has finished. */
  flush(): Promise<void> {
    return this.chain;
  }
}
