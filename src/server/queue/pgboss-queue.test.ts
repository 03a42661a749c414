// PgBossJobQueue on a real PostgreSQL (the "scale-out" project's server, testing/
// scale-out-global-setup.ts) with real pg-boss: each test gets a fresh database, so pg-boss's
// schema, its queues and our `jobs` table start empty. Lease expiry runs on the queue's injected
// clock; pg-boss's retry delay is 0, so a failed delivery is offered again at once and nothing
// waits on wall time.
import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, inject, it } from "vitest";
import type { Database } from "../db/database";
import { openPostgresDatabase } from "../db/postgres";
import type { Lease } from "./job-queue";
import { DEAD_LETTER_QUEUE, PgBossJobQueue, RENDER_QUEUE } from "./pgboss-queue";

const server = inject("postgresServer");
const LEASE_MS = 10_000;

let databaseName: string;
let url: string;
let now: number;
let errors: Error[];
let opened: { db: Database; queue: PgBossJobQueue }[];
let db: Database;
let queue: PgBossJobQueue;

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: `${server}postgres` });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** One service process: its own pool and its own pg-boss, on the test's database. */
async function openProcess() {
  const processDb = await openPostgresDatabase(url, { poolSize: 4 });
  const processQueue = await PgBossJobQueue.start(
    url,
    processDb,
    {
      leaseSeconds: LEASE_MS / 1000,
      maxAttempts: 3,
      expireInSeconds: 3600,
      retryDelaySeconds: 0,
      now: () => now,
    },
    (error) => errors.push(error),
  );
  opened.push({ db: processDb, queue: processQueue });
  return { db: processDb, queue: processQueue };
}

beforeEach(async () => {
  databaseName = `svc_queue_${randomBytes(6).toString("hex")}`;
  await admin((client) => client.query(`create database ${databaseName}`));
  url = `${server}${databaseName}`;
  now = 1_000_000;
  errors = [];
  opened = [];
  ({ db, queue } = await openProcess());
});

afterEach(async () => {
  for (const opening of opened) {
    await opening.queue.close();
    await opening.db.destroy();
  }
  // Errors up to here are the queue's. The forced drop below terminates any connection still
  // closing, and a client that hears "terminating connection due to administrator command"
  // (57P01) from it reports that too (seen now and then in CI): that one is the test's own doing.
  const queueErrors = [...errors];
  await admin((client) => client.query(`drop database ${databaseName} with (force)`));
  expect(queueErrors).toEqual([]);
});

async function jobRow(id: string) {
  return db
    .selectFrom("jobs")
    .select(["state", "attempts", "lease_owner"])
    .where("id", "=", id)
    .executeTakeFirst();
}

/** pg-boss's own state of a delivery (created, active, retry, completed, cancelled, failed). */
async function bossState(ref: string | undefined | null): Promise<string | undefined> {
  const { rows } = await sql<{ state: string }>`
    select state from pgboss.job where id = ${ref}::uuid`.execute(db);
  return rows[0]?.state;
}

async function bossJobs(queueName: string) {
  const { rows } = await sql<{ state: string; data: { jobId: string } }>`
    select state, data from pgboss.job where name = ${queueName} order by created_on`.execute(db);
  return rows;
}

async function queueRef(id: string) {
  const row = await db
    .selectFrom("jobs")
    .select("queue_ref")
    .where("id", "=", id)
    .executeTakeFirstOrThrow();
  return row.queue_ref;
}

/**
 * A deferred constraint trigger on `table` that, while the gate is closed, raises at commit: a
 * transaction that changed the table runs all of its work and is then rolled back as a whole, as
 * when the database connection dies at the last moment.
 */
async function commitGate(table: "jobs" | "pgboss.job") {
  await sql`create table if not exists commit_gate (closed boolean)`.execute(db);
  await sql`create or replace function refuse_commit() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from commit_gate) then raise exception 'commit refused'; end if;
      return null;
    end $$`.execute(db);
  await sql`create constraint trigger refuse_commit after insert or update or delete
    on ${sql.table(table)} deferrable initially deferred
    for each row execute function refuse_commit()`.execute(db);
  return {
    close: () => sql`insert into commit_gate values (true)`.execute(db),
    open: () => sql`delete from commit_gate`.execute(db),
  };
}

const finishes = (lease: Lease, runs: string[]) =>
  queue.finish(lease, "done", async () => void runs.push(lease.token));

describe("PgBossJobQueue", () => {
  it("delivers a job once; finish marks our row and the pg-boss job done, and nobody gets it again", async () => {
    await queue.enqueue(db, "rndr_a");
    expect(await jobRow("rndr_a")).toEqual({ state: "queued", attempts: 0, lease_owner: null });
    const lease = (await queue.claim("w1"))!;
    expect(lease).toMatchObject({ jobId: "rndr_a", attempt: 1 });
    expect(await bossState(lease.ref)).toBe("active");
    expect(await queue.claim("w2")).toBeUndefined();

    const runs: string[] = [];
    expect(await finishes(lease, runs)).toBe(true);
    expect(runs).toHaveLength(1);
    expect(await jobRow("rndr_a")).toMatchObject({ state: "done", attempts: 1 });
    expect(await bossState(lease.ref)).toBe("completed");
    expect(await queue.claim("w2")).toBeUndefined();
    expect(await finishes(lease, runs)).toBe(false);
    expect(runs).toHaveLength(1);
  });

  it("finishes and releases in one transaction with pg-boss: a commit that fails changes neither", async () => {
    const gate = await commitGate("jobs");
    await queue.enqueue(db, "rndr_a");
    const lease = (await queue.claim("w1"))!;
    const runs: string[] = [];

    await gate.close();
    await expect(finishes(lease, runs)).rejects.toThrow(/commit refused/);
    await expect(queue.release(lease)).rejects.toThrow(/commit refused/);
    await gate.open();
    expect(runs).toHaveLength(1);
    expect(await jobRow("rndr_a")).toMatchObject({ state: "active", lease_owner: "w1" });
    expect(await bossJobs(RENDER_QUEUE)).toEqual([{ state: "active", data: { jobId: "rndr_a" } }]);

    expect(await finishes(lease, runs)).toBe(true);
    expect(await bossState(lease.ref)).toBe("completed");
  });

  it("offers a job whose lease expired to another worker as attempt 2; the old holder can neither heartbeat nor finish", async () => {
    await queue.enqueue(db, "rndr_a");
    const old = (await queue.claim("dead-worker"))!;
    now += LEASE_MS / 2;
    expect(await queue.heartbeat(old)).toBe(true);
    now += LEASE_MS / 2 + 1;
    // Renewed half-way: still held, so the sweep leaves it alone and nobody else gets it.
    expect(await queue.collectExhausted()).toEqual([]);
    expect(await queue.claim("w2")).toBeUndefined();

    now += LEASE_MS;
    expect(await queue.collectExhausted()).toEqual([]);
    const fresh = (await queue.claim("w2"))!;
    expect(fresh).toMatchObject({ jobId: "rndr_a", attempt: 2 });
    expect(await queue.heartbeat(old)).toBe(false);
    const runs: string[] = [];
    expect(await finishes(old, runs)).toBe(false);
    expect(runs).toEqual([]);
    expect(await queue.heartbeat(fresh)).toBe(true);
    expect(await finishes(fresh, runs)).toBe(true);
    expect(runs).toEqual([fresh.token]);
    expect(await jobRow("rndr_a")).toMatchObject({ state: "done", attempts: 2 });
    expect(await bossState(fresh.ref)).toBe("completed");
  });

  it("takes back an expired lease only together with failing its pg-boss delivery", async () => {
    await queue.enqueue(db, "rndr_a");
    const old = (await queue.claim("dead-worker"))!;
    now += LEASE_MS + 1;
    const gate = await commitGate("pgboss.job");
    await gate.close();
    await expect(queue.collectExhausted()).rejects.toThrow(/commit refused/);
    await gate.open();
    // Nothing half done: the lease is still out and the delivery still active, for the next sweep.
    expect(await jobRow("rndr_a")).toMatchObject({ state: "active", lease_owner: "dead-worker" });
    expect(await bossState(old.ref)).toBe("active");

    expect(await queue.collectExhausted()).toEqual([]);
    expect(await queue.claim("w2")).toMatchObject({ jobId: "rndr_a", attempt: 2 });
  });

  it("moves a job to the dead letter queue after 3 expired attempts and reports it exhausted once", async () => {
    await queue.enqueue(db, "rndr_a");
    let last: Lease | undefined;
    for (let attempt = 1; attempt <= 3; attempt++) {
      last = (await queue.claim("w"))!;
      expect(last.attempt).toBe(attempt);
      now += LEASE_MS + 1;
      if (attempt < 3) expect(await queue.collectExhausted()).toEqual([]);
    }
    // What the caller does about it (fail the render) shares the transaction that takes the dead
    // letter: when it throws, the dead letter is still there for the next sweep.
    await expect(
      queue.collectExhausted(async () => {
        throw new Error("the render could not be failed");
      }),
    ).rejects.toThrow("the render could not be failed");
    const seen: string[] = [];
    expect(await queue.collectExhausted(async (_trx, jobId) => void seen.push(jobId))).toEqual([
      "rndr_a",
    ]);
    expect(seen).toEqual(["rndr_a"]);
    expect(await queue.collectExhausted()).toEqual([]);
    expect(await queue.claim("w")).toBeUndefined();
    expect(await finishes(last!, [])).toBe(false);
    expect(await jobRow("rndr_a")).toMatchObject({ state: "failed", attempts: 3 });
    expect(await bossState(last!.ref)).toBe("failed");
    expect(await bossJobs(DEAD_LETTER_QUEUE)).toEqual([
      { state: "completed", data: { jobId: "rndr_a" } },
    ]);
  });

  it("stops a deleted render's queued and active jobs, and leaves other renders' jobs alone", async () => {
    await queue.enqueue(db, "rndr_a:chunk:0");
    await queue.enqueue(db, "rndr_a:chunk:1");
    await queue.enqueue(db, "rndr_b");
    const active = (await queue.claim("w1"))!;
    expect(active.jobId).toBe("rndr_a:chunk:0");
    const queuedRef = await queueRef("rndr_a:chunk:1");

    await db.transaction().execute((trx) => queue.cancelRender(trx, "rndr_a"));
    expect(await queue.heartbeat(active)).toBe(false);
    expect(await finishes(active, [])).toBe(false);
    expect(await bossState(active.ref)).toBe("cancelled");
    expect(await bossState(queuedRef)).toBe("cancelled");
    const other = (await queue.claim("w2"))!;
    expect(other.jobId).toBe("rndr_b");
    expect(await queue.claim("w3")).toBeUndefined();
    expect(await finishes(other, [])).toBe(true);
    now += LEASE_MS * 10;
    expect(await queue.collectExhausted()).toEqual([]);
    expect(await queue.claim("w3")).toBeUndefined();
    expect(await jobRow("rndr_a:chunk:0")).toMatchObject({ state: "failed" });
    expect(await jobRow("rndr_a:chunk:1")).toMatchObject({ state: "failed" });
  });

  it("enqueues in the caller's transaction: a rollback leaves nothing to deliver", async () => {
    const enqueueThen = (outcome: "commit" | "rollback", jobId: string) =>
      db.transaction().execute(async (trx) => {
        await queue.enqueue(trx, jobId);
        if (outcome === "rollback") throw new Error("render insert failed");
      });
    await expect(enqueueThen("rollback", "rndr_a")).rejects.toThrow("render insert failed");
    expect(await jobRow("rndr_a")).toBeUndefined();
    expect(await bossJobs(RENDER_QUEUE)).toEqual([]);
    expect(await queue.claim("w")).toBeUndefined();

    await enqueueThen("commit", "rndr_b");
    expect((await queue.claim("w"))?.jobId).toBe("rndr_b");
  });

  it("hands a render's chunks to two processes claiming at the same time, each chunk exactly once", async () => {
    const second = await openProcess();
    const chunks = [0, 1, 2, 3, 4, 5].map((chunk) => `rndr_a:chunk:${chunk}`);
    await db.transaction().execute(async (trx) => {
      for (const jobId of chunks) await queue.enqueue(trx, jobId);
    });
    const held: { queue: PgBossJobQueue; lease: Lease }[] = [];
    for (let round = 0; round < chunks.length / 2; round++) {
      const [one, two] = await Promise.all([queue.claim("w1"), second.queue.claim("w2")]);
      held.push({ queue, lease: one! }, { queue: second.queue, lease: two! });
    }
    expect(await Promise.all([queue.claim("w1"), second.queue.claim("w2")])).toEqual([
      undefined,
      undefined,
    ]);
    expect(held.map(({ lease }) => lease.jobId).sort()).toEqual(chunks);
    expect(held.every(({ lease }) => lease.attempt === 1)).toBe(true);

    const runs: string[] = [];
    const finished = await Promise.all(
      held.map(({ queue: owner, lease }) =>
        owner.finish(lease, "done", async () => void runs.push(lease.jobId)),
      ),
    );
    expect(finished.every(Boolean)).toBe(true);
    expect(runs.sort()).toEqual(chunks);
    expect((await bossJobs(RENDER_QUEUE)).map((job) => job.state)).toEqual(
      chunks.map(() => "completed"),
    );
  });

  it("gives a released job back as a new delivery without using up the attempt", async () => {
    await queue.enqueue(db, "rndr_a");
    const lease = (await queue.claim("w1"))!;
    await queue.release(lease);
    expect(await bossState(lease.ref)).toBe("completed");
    const again = (await queue.claim("w2"))!;
    expect(again).toMatchObject({ jobId: "rndr_a", attempt: 1 });
    expect(again.ref).not.toBe(lease.ref);
    expect(await finishes(lease, [])).toBe(false);
  });

  it("offers a job its holder gave up on again as the next attempt, through a pg-boss retry", async () => {
    await queue.enqueue(db, "rndr_a:join");
    const lease = (await queue.claim("w1"))!;
    expect(await queue.retry(lease, "FFmpeg failed")).toBe(true);
    expect(await bossState(lease.ref)).toBe("retry");
    expect(await queue.retry(lease, "FFmpeg failed")).toBe(false);
    const again = (await queue.claim("w2"))!;
    expect(again).toMatchObject({ jobId: "rndr_a:join", attempt: 2 });
    expect(await finishes(lease, [])).toBe(false);
    expect(await finishes(again, [])).toBe(true);
  });
});
