// Idempotency keys on a real SQLite database: the answer is recorded in the same transaction as
// the work, so neither a crash after the commit nor a rollback can make a retry do the work twice
// or lose it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Database } from "../db/database";
import { openSqliteDatabase } from "../db/sqlite";
import { withIdempotency } from "./idempotency";
import { SqlJobQueue } from "../queue/sql-queue";

let dir: string;
let db: Database;
let queue: SqlJobQueue;
let now: number;

const scope = { userId: "user-1", endpoint: "POST /test", key: "key-1", body: { a: 1 } };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-idempotency-"));
  db = await openSqliteDatabase(join(dir, "svc.db"));
  queue = new SqlJobQueue(db, { leaseSeconds: 10, maxAttempts: 3 });
  now = 1_000_000;
});

afterEach(async () => {
  await db.destroy();
  await rm(dir, { recursive: true, force: true });
});

async function jobCount(): Promise<number> {
  const rows = await db.selectFrom("jobs").select("id").execute();
  return rows.length;
}

describe("withIdempotency", () => {
  it("keeps the answer committed with the work even when the request dies afterwards", async () => {
    let runs = 0;
    const work = () =>
      withIdempotency(
        db,
        scope,
        async (record) => {
          runs++;
          const answer = { status: 201, body: { data: { job: `job-${runs}` } } };
          await db.transaction().execute(async (trx) => {
            await queue.enqueue(trx, `job-${runs}`);
            await record(trx, answer);
          });
          throw new Error("the process died before answering");
        },
        () => now,
      );
    await expect(work()).rejects.toThrow("the process died");
    // Long after a placeholder would count as abandoned, the retry replays the recorded answer.
    now += 10 * 60 * 1000;
    const retry = await work();
    expect(retry).toEqual({ status: 201, body: { data: { job: "job-1" } }, replayed: true });
    expect(runs).toBe(1);
    expect(await jobCount()).toBe(1);
  });

  it("forgets the key when the work's transaction rolls back, so a retry does the work", async () => {
    let runs = 0;
    const work = (fail: boolean) =>
      withIdempotency(
        db,
        scope,
        async (record) => {
          runs++;
          const answer = { status: 201, body: { data: { job: `job-${runs}` } } };
          await db.transaction().execute(async (trx) => {
            await queue.enqueue(trx, `job-${runs}`);
            await record(trx, answer);
            if (fail) throw new Error("disk full");
          });
          return answer;
        },
        () => now,
      );
    await expect(work(true)).rejects.toThrow("disk full");
    expect(await jobCount()).toBe(0);
    const retry = await work(false);
    expect(retry).toEqual({ status: 201, body: { data: { job: "job-2" } }, replayed: false });
    expect(await jobCount()).toBe(1);
    expect(await work(false)).toMatchObject({ replayed: true, body: { data: { job: "job-2" } } });
    expect(runs).toBe(2);
  });

  it("still stores the answer of a handler that does not record it itself", async () => {
    let runs = 0;
    const work = () =>
      withIdempotency(
        db,
        scope,
        async () => ({ status: 201, body: { n: ++runs } }),
        () => now,
      );
    expect(await work()).toMatchObject({ replayed: false, body: { n: 1 } });
    expect(await work()).toMatchObject({ replayed: true, body: { n: 1 } });
  });
});
