// The app's small state files (settings, the job queue) are JSON written atomically: a temp file
// in the same folder, then rename, so a crash or SIGKILL mid-write leaves the previous version,
// never half a file. Writes to one file are serialised so a slow write cannot land after a newer one.
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

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
  await writeTextAtomic(file, `${JSON.stringify(value, null, 2)}\n`);
}

async function writeTextAtomic(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temp, text, { mode: 0o600 });
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Serialises the writes of one file; `write` returns when this value (or a newer one) is on disk. */
export class JsonFileWriter {
  private chain: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  write(value: unknown): Promise<void> {
    // Snapshot now: the caller may change the object before the queued write runs.
    const text = `${JSON.stringify(value, null, 2)}\n`;
    const next = this.chain.then(() => writeTextAtomic(this.file, text));
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Resolves when every write queued so far has finished. */
  flush(): Promise<void> {
    return this.chain;
  }
}
