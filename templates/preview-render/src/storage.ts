// Where finished videos live, behind a three-call seam: put (a finished local file goes in whole,
// or not at all), get (the size and either a byte-range reader, for GET /renders/:name with
// Range, or a URL to redirect to), delete. The folder store is the default and what the
// serverless-container shape uses on its volume; S3-compatible storage is s3-storage.ts.
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { copyFile, mkdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";

/** Names of stored videos: `<call_id>.<ext>`. Never a path, never a dot file (temp files are). */
export const STORED_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}\.(mp4|webm|mov|gif|zip)$/;

export type StoredVideo =
  | {
      size: number;
      /** Bytes start..end (inclusive), or the whole video. */
      open(range?: { start: number; end: number }): Readable;
    }
  | {
      size: number;
      /** Where the video is fetched from directly (with Range): GET /renders/:name redirects. */
      url: string;
    };

export interface RenderStore {
  /** Stores the finished file `localFile` under `name`; readers see all of it or nothing. */
  put(name: string, localFile: string): Promise<void>;
  get(name: string): Promise<StoredVideo | undefined>;
  delete(name: string): Promise<void>;
}

export class FolderStore implements RenderStore {
  constructor(readonly dir: string) {}

  async put(name: string, localFile: string): Promise<void> {
    checkName(name);
    await mkdir(this.dir, { recursive: true });
    // A dot-named temp file in the same folder, then one rename: GET never sees a partial video
    // (dot names are not valid stored names), and a crash leaves only a temp file behind.
    const temp = join(this.dir, `.${name}.${randomBytes(4).toString("hex")}.partial`);
    try {
      await rename(localFile, temp).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== "EXDEV") throw error;
        await copyFile(localFile, temp);
      });
      await rename(temp, join(this.dir, name));
    } finally {
      await rm(temp, { force: true });
    }
  }

  async get(name: string): Promise<StoredVideo | undefined> {
    if (!STORED_NAME.test(name)) return undefined;
    const path = join(this.dir, name);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) return undefined;
    return {
      size: info.size,
      open: (range) => createReadStream(path, range ?? {}),
    };
  }

  async delete(name: string): Promise<void> {
    checkName(name);
    await rm(join(this.dir, name), { force: true });
  }
}

export function checkName(name: string): void {
  if (!STORED_NAME.test(name)) throw new Error(`not a stored video name: ${name}`);
}
