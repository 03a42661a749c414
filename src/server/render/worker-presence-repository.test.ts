// Live workers as the API counts them to size chunks: announced slots within the last 30 s, a
// stopped worker gone at once, a silent one dropped on its own.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { planChunks } from "../../engine/stages/plan";
import type { Database } from "../db/database";
import { openSqliteDatabase } from "../db/sqlite";
import { announceWorker, forgetWorker, liveWorkerSlots } from "./worker-presence-repository";

let dir: string;
let db: Database;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-presence-"));
  db = await openSqliteDatabase(join(dir, "svc.db"));
});

afterEach(async () => {
  await db.destroy();
  await rm(dir, { recursive: true, force: true });
});

describe("worker presence", () => {
  it("counts the slots of workers seen in the last 30 s, and sizes chunks by them", async () => {
    const now = 1_000_000;
    expect(await liveWorkerSlots(db, now)).toBe(0);
    await announceWorker(db, "w1", 1, now - 40_000);
    await announceWorker(db, "w2", 2, now - 1_000);
    await announceWorker(db, "w3", 1, now - 2_000);
    expect(await liveWorkerSlots(db, now)).toBe(3);
    await announceWorker(db, "w1", 1, now); // back: upserted, not doubled
    expect(await liveWorkerSlots(db, now)).toBe(4);
    await forgetWorker(db, "w2");
    const live = await liveWorkerSlots(db, now);
    expect(live).toBe(2);
    // 10 minutes at 30 fps on 2 live slots: about 4 chunks.
    const chunks = planChunks(18_000, 30, {
      chunkSeconds: 10,
      maxChunks: 256,
      liveWorkers: live,
      minChunkFrames: 30,
    });
    expect(chunks).toHaveLength(4);
  });
});
