// Unzipped projects kept on a worker's disk by asset id, so a second chunk of the same asset on
// this worker skips the download and the unzip (an asset never changes once uploaded). Bounded by
// bytes, least recently used out first; a project a job is using is never evicted. An entry is
// unzipped into a temp dir and renamed into place, so a crash never leaves half a project that a
// later job would take for whole.
import { mkdir, readdir, rename, rm, stat, utimes } from "node:fs/promises";
import { join } from "node:path";
import { randomToken } from "../ids";

interface Entry {
  dir: string;
  bytes: number;
  usedMs: number;
  users: number;
}

export class ProjectCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<Entry>>();

  constructor(
    private readonly root: string,
    private readonly maxBytes: number,
  ) {}

  /**
   * The project of `assetId`, unzipped by `unpack(dir)` the first time; `release` when the job is
   * done with it (resolves once the cache is back within its bound). `hit`: it was already here.
   */
  async acquire(
    assetId: string,
    unpack: (dir: string) => Promise<void>,
  ): Promise<{ dir: string; hit: boolean; release: () => Promise<void> }> {
    let entry = this.entries.get(assetId);
    const hit = entry !== undefined;
    if (!entry) {
      let loading = this.pending.get(assetId);
      if (!loading) {
        loading = this.load(assetId, unpack).finally(() => this.pending.delete(assetId));
        this.pending.set(assetId, loading);
      }
      entry = await loading;
    }
    entry.users++;
    entry.usedMs = Date.now();
    await utimes(entry.dir, new Date(), new Date()).catch(() => undefined);
    let released = false;
    return {
      dir: entry.dir,
      hit,
      release: async () => {
        if (released) return;
        released = true;
        entry.users--;
        await this.evict();
      },
    };
  }

  private async load(assetId: string, unpack: (dir: string) => Promise<void>): Promise<Entry> {
    await mkdir(this.root, { recursive: true });
    const dir = join(this.root, safeName(assetId));
    const temp = join(this.root, `.${safeName(assetId)}.${randomToken(6)}`);
    try {
      await rm(dir, { recursive: true, force: true });
      await unpack(temp);
      await rename(temp, dir);
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
    const entry: Entry = { dir, bytes: await folderBytes(dir), usedMs: Date.now(), users: 0 };
    this.entries.set(assetId, entry);
    return entry;
  }

  /** Least recently used projects out until the cache fits, skipping those in use. */
  private async evict(): Promise<void> {
    let total = [...this.entries.values()].reduce((sum, entry) => sum + entry.bytes, 0);
    const idle = [...this.entries].filter(([, e]) => e.users === 0);
    idle.sort((a, b) => a[1].usedMs - b[1].usedMs);
    for (const [assetId, entry] of idle) {
      if (total <= this.maxBytes) break;
      this.entries.delete(assetId);
      total -= entry.bytes;
      await rm(entry.dir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  /** Everything removed (worker shutdown, tests). */
  async clear(): Promise<void> {
    this.entries.clear();
    await rm(this.root, { recursive: true, force: true });
  }
}

function safeName(assetId: string): string {
  return assetId.replace(/[^A-Za-z0-9_-]/g, "_");
}

async function folderBytes(dir: string): Promise<number> {
  let bytes = 0;
  for (const item of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!item.isFile()) continue;
    bytes += (await stat(join(item.parentPath, item.name))).size;
  }
  return bytes;
}
