// The durable job queue on a real SQLite database, with an injected clock.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Database } from "../db/database";
import { openSqliteDatabase } from "../db/sqlite";
import { SqlJobQueue } from "./sql-queue";

let dir: string;
let db: Database;
let now: number;
let queue: SqlJobQueue;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-queue-"));
  db = await openSqliteDatabase(join(dir, "svc.db"));
  now = 1_000_000;
  queue = new SqlJobQueue(db, { leaseSeconds: 10, maxAttempts: 3, now: () => now });
});

afterEach(async () => {
  await db.destroy();
  await rm(dir, { recursive: true, force: true });
});

describe("SqlJobQueue", () => {
  it("hands a job to one worker at a time, oldest first", async () => {
    await queue.enqueue(db, "job-a");
    now += 1;
    await queue.enqueue(db, "job-b");
    const first = await queue.claim("w1");
    const second = await queue.claim("w2");
    expect(first?.jobId).toBe("job-a");
    expect(second?.jobId).toBe("job-b");
    expect(await queue.claim("w3")).toBeUndefined();
  });

  it("lets another worker take a job whose lease expired, and the old holder can no longer finish it", async () => {
    await queue.enqueue(db, "job");
    const old = (await queue.claim("dead-worker"))!;
    now += 5_000;
    expect(await queue.heartbeat(old)).toBe(true);
    expect(await queue.claim("w2")).toBeUndefined();
    now += 10_001;
    const fresh = (await queue.claim("w2"))!;
    expect(fresh.attempt).toBe(2);
    expect(await queue.heartbeat(old)).toBe(false);
    let ranForOld = false;
    expect(await queue.finish(old, "done", async () => void (ranForOld = true))).toBe(false);
    expect(ranForOld).toBe(false);
    let ranForFresh = 0;
    expect(await queue.finish(fresh, "done", async () => void ranForFresh++)).toBe(true);
    expect(await queue.finish(fresh, "done", async () => void ranForFresh++)).toBe(false);
    expect(ranForFresh).toBe(1);
  });

  it("offers a job its holder gave up on again as the next attempt; the holder can no longer finish it", async () => {
    await queue.enqueue(db, "job");
    const first = (await queue.claim("w1"))!;
    expect(await queue.retry(first)).toBe(true);
    expect(await queue.retry(first)).toBe(false);
    const second = (await queue.claim("w2"))!;
    expect(second.attempt).toBe(2);
    expect(await queue.finish(first, "done", async () => {})).toBe(false);
    expect(await queue.finish(second, "done", async () => {})).toBe(true);
  });

  it("gives up after 3 attempts: the job is collected as exhausted, once, together with what the caller does about it", async () => {
    await queue.enqueue(db, "job");
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect((await queue.claim("w"))?.attempt).toBe(attempt);
      now += 10_001;
    }
    expect(await queue.claim("w")).toBeUndefined();
    // What the caller does about it shares the marking's transaction: if it fails, so does that.
    await expect(
      queue.collectExhausted(async () => {
        throw new Error("the render could not be failed");
      }),
    ).rejects.toThrow("the render could not be failed");
    const seen: string[] = [];
    expect(await queue.collectExhausted(async (_trx, jobId) => void seen.push(jobId))).toEqual([
      "job",
    ]);
    expect(seen).toEqual(["job"]);
    expect(await queue.collectExhausted()).toEqual([]);
  });

  it("releases a lease on shutdown without using up the attempt", async () => {
    await queue.enqueue(db, "job");
    const lease = (await queue.claim("w"))!;
    await queue.release(lease);
    expect((await queue.claim("w2"))?.attempt).toBe(1);
  });

  it("stops a cancelled job: its heartbeat fails and nobody claims it", async () => {
    await queue.enqueue(db, "job");
    const lease = (await queue.claim("w"))!;
    await queue.cancelRender(db, "job");
    expect(await queue.heartbeat(lease)).toBe(false);
    now += 60_000;
    expect(await queue.claim("w2")).toBeUndefined();
  });
});
