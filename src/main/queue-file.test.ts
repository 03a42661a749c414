// The render queue's file across the rename of issue 39: a queue an older app saved in jobs.json
// opens with every record, moves to queue.json once, and is never deleted unread.
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { QueueStore } from "./queue-store";
import { newQueuedRenderRecord } from "./queue-records";
import { tempDir, TINY_RENDER } from "./testing/support";

let dir: string;
beforeEach(async () => {
  dir = await tempDir("svc-queue-file-");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A queue as the app before issue 39 wrote it: `{version: 1, jobs, batches}` in jobs.json. */
function oldQueue() {
  const record = (id: string, status: "running" | "completed", renderId?: string) => ({
    ...newQueuedRenderRecord(
      { type: "dir", dir: "/p/intro", composition: "index.html" },
      TINY_RENDER,
      "/videos",
      1_000,
    ),
    id,
    title: `intro ${id}`,
    status,
    stage: status === "running" ? "rendering" : "download",
    renderId,
    idempotencyKey: `svc-desktop-${id}`,
  });
  return {
    version: 1,
    jobs: [record("job_a", "running", "rnd_a"), record("job_b", "completed", "rnd_b")],
    batches: [
      {
        id: "batch_1",
        revision: 3,
        title: "intro",
        createdAt: 900,
        dir: "/p/intro",
        composition: "index.html",
        outputDir: "/videos/intro batch",
        outputPattern: "{row}",
        settings: TINY_RENDER,
        rowCount: 2,
        upload: { stage: "upload", progress: 0.5, error: undefined },
        assetId: undefined,
        uploadKey: "svc-desktop-batch_1",
      },
    ],
  };
}

it("opens an older app's jobs.json with every record, and moves it to queue.json once", async () => {
  await writeFile(join(dir, "jobs.json"), JSON.stringify(oldQueue(), null, 2));
  const file = join(dir, "queue.json");
  const store = await QueueStore.open(file, () => 2_000);
  expect(store.all().map((record) => [record.id, record.status, record.renderId])).toEqual([
    ["job_a", "waiting", "rnd_a"], // was running when the old app stopped: resumes
    ["job_b", "completed", "rnd_b"],
  ]);
  expect(store.allBatches().map((batch) => [batch.id, batch.upload.stage])).toEqual([
    ["batch_1", "waiting"],
  ]);
  // Moved: the new file holds the old one's records as they were; the old file is gone.
  const moved = JSON.parse(await readFile(file, "utf8"));
  expect(moved).toEqual({
    version: 2,
    queuedRenders: JSON.parse(JSON.stringify(oldQueue().jobs)),
    batches: JSON.parse(JSON.stringify(oldQueue().batches)),
  });
  expect(existsSync(join(dir, "jobs.json"))).toBe(false);
  // Opened again (the next start): the same records, from queue.json.
  const again = await QueueStore.open(file, () => 3_000);
  expect(again.all().map((record) => record.id)).toEqual(["job_a", "job_b"]);
  expect(again.allBatches()).toHaveLength(1);
});

it("reads queue.json when both exist and leaves the old file as it is", async () => {
  await writeFile(join(dir, "jobs.json"), JSON.stringify(oldQueue()));
  const current = { version: 2, queuedRenders: [oldQueue().jobs[1]], batches: [] };
  await writeFile(join(dir, "queue.json"), JSON.stringify(current));
  const store = await QueueStore.open(join(dir, "queue.json"), () => 2_000);
  expect(store.all().map((record) => record.id)).toEqual(["job_b"]);
  expect(JSON.parse(await readFile(join(dir, "jobs.json"), "utf8"))).toEqual(
    JSON.parse(JSON.stringify(oldQueue())),
  );
});

it("keeps an old file it cannot read instead of replacing it", async () => {
  await writeFile(join(dir, "jobs.json"), "{ not json");
  const store = await QueueStore.open(join(dir, "queue.json"), () => 2_000);
  expect(store.all()).toEqual([]);
  expect(await readFile(join(dir, "jobs.json"), "utf8")).toBe("{ not json");
  expect(existsSync(join(dir, "queue.json"))).toBe(false);
});
