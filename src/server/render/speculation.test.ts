// Which chunk gets a speculative copy, and what the second completion of a chunk does, on a real
// SQLite database with an injected clock (the race itself, with real processes, is in
// src/server/speculative.test.ts).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../config";
import type { ServiceContext } from "../context";
import type { Database } from "../db/database";
import { openSqliteDatabase } from "../db/sqlite";
import { ServiceMetrics } from "../metrics";
import { SqlJobQueue } from "../queue/sql-queue";
import { completeChunk } from "./chunk-repository";
import { loadRender } from "./render-repository";
import { isStraggler, startSpeculativeCopies } from "./speculation";

const RENDER = "rndr_spec";
let dir: string;
let db: Database;
let now: number;
let queue: SqlJobQueue;
let ctx: ServiceContext;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-speculation-"));
  db = await openSqliteDatabase(join(dir, "svc.db"));
  now = 2_000;
  queue = new SqlJobQueue(db, { leaseSeconds: 60, maxAttempts: 3, now: () => now });
  ctx = {
    config: loadConfig({ dataDir: dir }, { SVC_SERVER_SPECULATIVE_MIN_SECONDS: "5" }),
    db,
    store: undefined as never,
    log: Fastify({ logger: false }).log,
    now: () => now,
    metrics: new ServiceMetrics(undefined, { role: "all" }),
  };
  await db
    .insertInto("users")
    .values({
      id: "user_1",
      email: "a@example.com",
      username: "a",
      first_name: null,
      last_name: null,
      plan: "free",
      credits_remaining_milli: 100_000,
      credits_used_milli: 0,
      webhook_secret: "s",
      created_ms: 0,
    })
    .execute();
  await db
    .insertInto("renders")
    .values({
      id: RENDER,
      user_id: "user_1",
      status: "rendering",
      progress: 0,
      title: null,
      fps: 10,
      quality: "draft",
      format: "mp4",
      resolution: "1080p",
      aspect_ratio: "16:9",
      composition: "main",
      variables_json: "{}",
      strict_variables: 0,
      warnings_json: "[]",
      project_json: "{}",
      asset_id: "asset_1",
      duration: null,
      credits_charged_milli: 0,
      created_ms: 0,
      started_ms: 0,
      completed_ms: null,
      video_key: null,
      thumbnail_key: null,
      failure_code: null,
      failure_message: null,
      callback_url: null,
      callback_id: null,
      deleted_ms: null,
      request_id: null,
      held: 0,
      frames: 30,
      chunk_count: 3,
      chunks_done: 2,
      audio_json: null,
      output_count: 0,
      outputs_done: 0,
    })
    .execute();
  // Chunks 0 and 1 took 10 s and 12 s; chunk 2 has been rendering since 2 s, its lease live.
  const chunk = (idx: number, state: "done" | "rendering", started: number, done?: number) => ({
    render_id: RENDER,
    idx,
    first_segment: idx,
    segment_count: 1,
    first_frame: idx * 10,
    frame_count: 10,
    state,
    frames_done: state === "done" ? 10 : 3,
    attempts: 1,
    worker: "w1",
    segments_json: state === "done" ? JSON.stringify([`chunks/${idx}-1/segment.mp4`]) : null,
    started_ms: started,
    completed_ms: done ?? null,
  });
  await db
    .insertInto("render_chunks")
    .values([
      chunk(0, "done", 0, 10_000),
      chunk(1, "done", 0, 12_000),
      chunk(2, "rendering", 2_000),
    ])
    .execute();
  await queue.enqueue(db, `${RENDER}:chunk:2`);
  expect((await queue.claim("slow-worker"))?.jobId).toBe(`${RENDER}:chunk:2`);
});

afterEach(async () => {
  await db.destroy();
  await rm(dir, { recursive: true, force: true });
});

const jobIds = async () =>
  (await db.selectFrom("jobs").select(["id", "state"]).orderBy("id").execute()).map(
    (job) => `${job.id} ${job.state}`,
  );

describe("speculative copies of straggler chunks", () => {
  it("calls a chunk a straggler past factor x the median of its siblings and the minimum time", () => {
    const settings = { factor: 2, minSeconds: 5 };
    expect(isStraggler(22_000, [10_000, 12_000], settings)).toBe(false);
    expect(isStraggler(22_001, [10_000, 12_000], settings)).toBe(true);
    expect(isStraggler(4_000, [1_000, 1_000], settings)).toBe(false);
    expect(isStraggler(99_000, [1_000], { factor: 0, minSeconds: 0 })).toBe(false);
    expect(isStraggler(99_000, [], settings)).toBe(false);
  });

  it("queues one copy of a render's last running chunk once it runs twice the median, and never a second", async () => {
    now = 2_000 + 22_000;
    expect(await startSpeculativeCopies(ctx, queue)).toBe(0);
    now = 2_000 + 23_000;
    expect(await startSpeculativeCopies(ctx, queue)).toBe(1);
    expect(await jobIds()).toEqual([`${RENDER}:chunk:2 active`, `${RENDER}:chunk:2:copy queued`]);
    now += 10_000;
    expect(await startSpeculativeCopies(ctx, queue)).toBe(0);
    expect(await jobIds()).toHaveLength(2);
  });

  it("leaves a chunk whose worker stopped renewing its lease to the queue", async () => {
    now = 2_000 + 61_000;
    expect(await startSpeculativeCopies(ctx, queue)).toBe(0);
    expect(await jobIds()).toEqual([`${RENDER}:chunk:2 active`]);
  });

  it("records a chunk once: the copy that finishes second changes nothing", async () => {
    const render = (await loadRender(db, RENDER))!;
    const done = (copy: boolean) => ({
      frameCount: 10,
      worker: copy ? "w2" : "w1",
      segmentKeys: [`chunks/2-${copy ? "copy-" : ""}1/segment.mp4`],
      audioJson: undefined,
      thumbnailKey: undefined,
      copy,
      now,
    });
    const first = await db
      .transaction()
      .execute((trx) => completeChunk(trx, render, 2, done(true)));
    const second = await db
      .transaction()
      .execute((trx) => completeChunk(trx, render, 2, done(false)));
    expect([first, second]).toEqual(["completes-set", "already-done"]);
    const row = await db
      .selectFrom("render_chunks")
      .select(["segments_json", "copy_won", "worker"])
      .where("render_id", "=", RENDER)
      .where("idx", "=", 2)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({
      segments_json: JSON.stringify(["chunks/2-copy-1/segment.mp4"]),
      copy_won: 1,
      worker: "w2",
    });
    expect((await loadRender(db, RENDER))!.chunks_done).toBe(3);
  });
});
