// The render queue's file in the app data dir: queue.json, `{version: 2, queuedRenders, batches}`.
// Apps before issue 39 (when the desktop's queue entries were still called jobs; "job" is now the
// service's queue job) kept the same records in jobs.json as `{version: 1, jobs, batches}`. An app
// that finds only jobs.json reads it once, writes every record to queue.json (atomically), and only
// then removes jobs.json: a quit in between leaves both, and queue.json, already complete, wins.
// When both exist the old one is left alone (it may be an older version's newer queue): nothing
// saved is ever deleted unread.
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { readJsonFile, writeJsonFileAtomic } from "../node/index";
import type { BatchRecord, QueuedRenderRecord } from "./queue-store";

export const QUEUE_FILE_NAME = "queue.json";
/** Where apps before issue 39 kept the queue, next to queue.json. */
export const OLD_QUEUE_FILE_NAME = "jobs.json";

export interface QueueFile {
  version: 2;
  queuedRenders: QueuedRenderRecord[];
  /** Absent in files written before batches existed. */
  batches?: BatchRecord[];
}

interface OldQueueFile {
  version: 1;
  jobs?: QueuedRenderRecord[];
  batches?: BatchRecord[];
}

/** The queue saved at `file` (a queue.json), moving an old jobs.json beside it there first. */
export async function readQueueFile(file: string): Promise<Partial<QueueFile> | undefined> {
  const old = join(dirname(file), OLD_QUEUE_FILE_NAME);
  if (existsSync(file) || !existsSync(old)) {
    return (await readJsonFile(file)) as Partial<QueueFile> | undefined;
  }
  const stored = (await readJsonFile(old)) as Partial<OldQueueFile> | undefined;
  // Not JSON: kept as it is (the app before would have overwritten it; this one leaves it be).
  if (!stored || typeof stored !== "object") return undefined;
  const moved: QueueFile = {
    version: 2,
    queuedRenders: Array.isArray(stored.jobs) ? stored.jobs : [],
    batches: Array.isArray(stored.batches) ? stored.batches : [],
  };
  await writeJsonFileAtomic(file, moved);
  await rm(old, { force: true });
  return moved;
}
