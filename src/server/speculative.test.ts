// A straggler chunk started a second time elsewhere (issue 24), with the real service: a chunk
// is made to straggle for real, its worker alive and holding its lease, while the other chunks
// finish; an idle worker runs a copy of it, the copy finishes first and wins, the render is
// joined once and charged once, and the straggler, let go again, changes nothing: it stops (or
// its late finish records nothing), its objects are gone, the video decodes to the frames of a
// whole render.
// - default project (SQLite, one process with two worker slots): the FFmpeg encoder of one
//   chunk is stopped (SIGSTOP), so its slot waits on a full pipe.
// - "scale-out" project (PostgreSQL + pg-boss, S3): two service processes on one database and
//   bucket; the worker process rendering a chunk is stopped as a whole (SIGSTOP), its lease long
//   enough to outlive the test's wait, then continued (SIGCONT).
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderComposition } from "../engine/render";
import { frameHashes } from "../engine/testing/probe";
import { renderCostMilli } from "./render/credits";
import {
  api,
  queryServiceDatabase,
  startService,
  suiteDatabase,
  tempDir,
  uploadProject,
  waitForTerminalRender,
  type ServiceProcess,
} from "./testing/service-process";
import { buildZip, compositionHtml } from "./testing/zip-builder";
import { waitFor } from "../shared/testing/wait-for";

// 8 s at 10 fps: 80 frames in segments of 10, two segments (2 s) to a chunk: 4 chunks.
const SECONDS = 8;
const FPS = 10;
const FRAMES_PER_SEGMENT = 10;
const SEGMENTS_PER_CHUNK = 2;
const ENV = {
  SVC_SERVER_CHUNK_SECONDS: "2",
  SVC_SERVER_MAX_CHUNKS: "8",
  // The default factor (2 x the median chunk), and no wait beyond it.
  SVC_SERVER_SPECULATIVE_MIN_SECONDS: "1",
  // The stopped worker keeps its lease: it is slow, not dead.
  SVC_SERVER_LEASE_SECONDS: "120",
};
const onPostgres = process.env.SVC_TEST_DATABASE === "postgres";
// The SDK's notice about future Node versions, as the service silences it (storage/s3-store.ts).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

let dir: string;
/** Frame hashes of the composition rendered whole by the engine in the test process. */
let reference: Promise<string[]>;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  dir = await tempDir("svc-speculative-");
  const project = join(dir, "project");
  await mkdir(project);
  await writeFile(join(project, "index.html"), compositionHtml({ seconds: SECONDS }));
  reference = renderComposition({
    projectDir: project,
    output: join(dir, "whole.mp4"),
    fps: FPS,
    quality: "draft",
    workers: 1,
    thumbnail: false,
  }).then((result) => frameHashes(result.outputPath));
  reference.catch(() => undefined); // awaited (and reported) by the test
});

afterAll(async () => {
  for (const service of services) {
    service.child.kill("SIGCONT");
    await service.kill("SIGKILL");
  }
});

async function submit(service: ServiceProcess): Promise<string> {
  const zip = buildZip([
    { name: "index.html", data: compositionHtml({ seconds: SECONDS }), deflate: true },
  ]);
  const { assetId } = await uploadProject(service, service.apiKey, zip);
  const submitted = await api(service, "POST", "/v3/svc/renders", {
    key: service.apiKey,
    body: { project: { type: "asset_id", asset_id: assetId }, fps: FPS, quality: "draft" },
  });
  expect(submitted.status).toBe(201);
  return submitted.body.data.render_id as string;
}

const creditsUsed = async (service: ServiceProcess): Promise<number> =>
  (await api(service, "GET", "/v3/users/me", { key: service.apiKey })).body.data.billing
    .credits_used;

interface ChunkRow {
  idx: number;
  state: string;
  worker: string | null;
  segments_json: string | null;
  speculative_ms: number | null;
  copy_won: number;
  attempts: number;
  frames_done: number;
}

function chunkRows(service: ServiceProcess, renderId: string): Promise<ChunkRow[]> {
  return queryServiceDatabase<ChunkRow>(
    service.dataDir,
    "select idx, state, worker, segments_json, speculative_ms, copy_won, attempts, frames_done from render_chunks where render_id = ? order by idx",
    [renderId],
  );
}

/** Log lines of the processes about one render, parsed. */
function logLines(of: ServiceProcess[], renderId: string): Array<Record<string, unknown>> {
  return of.flatMap((service) =>
    service
      .logs()
      .split("\n")
      .filter((line) => line.includes(renderId))
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
  );
}

/** The keys of the objects the service has stored under `prefix` (its data dir, or S3). */
async function storedUnder(service: ServiceProcess, prefix: string): Promise<string[]> {
  if (!service.s3) {
    const root = join(service.dataDir, "objects", prefix);
    const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
    return entries
      .filter((entry) => entry.isFile())
      .map((entry) =>
        relative(join(service.dataDir, "objects"), join(entry.parentPath, entry.name)),
      );
  }
  const { endpoint, region, accessKeyId, secretAccessKey, bucket } = service.s3;
  const client = new S3Client({
    endpoint,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
  });
  try {
    const listed = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: `${service.s3.prefix}/${prefix}` }),
    );
    return (listed.Contents ?? []).map((object) =>
      object.Key!.slice(service.s3!.prefix.length + 1),
    );
  } finally {
    client.destroy();
  }
}

/** A counter's value in a /metrics scrape (0 when absent). */
async function metric(service: ServiceProcess, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const line = text.split("\n").find((row) => row.startsWith(`${name}{`) && row.includes(labels));
  return line ? Number(line.split(" ").pop()) : 0;
}

/**
 * What every speculative render must show once its straggler has ended: one copy, of that chunk,
 * won; one join; charged once; segments referenced once; no objects of the loser left; frames
 * equal to a whole render; the count in the finished line and in /metrics.
 */
async function expectWonOnce(options: {
  renderId: string;
  record: Record<string, unknown>;
  straggler: number;
  creditsBefore: number;
  api: ServiceProcess;
  all: ServiceProcess[];
}): Promise<void> {
  const { renderId, record, straggler, api: service, all } = options;
  // The join deletes the segments after the render completed, then logs its finished line.
  const joined = await waitFor("the join's finished line", async () =>
    logLines(all, renderId).find((line) => line.msg === "join finished"),
  );
  expect(joined).toMatchObject({ finished: true, speculative: 1, speculativeWon: 1 });
  const rows = await chunkRows(service, renderId);
  expect(rows.map((row) => row.state)).toEqual(Array(SECONDS / 2).fill("done"));
  expect(rows.filter((row) => row.speculative_ms !== null).map((row) => row.idx)).toEqual([
    straggler,
  ]);
  expect(rows.find((row) => row.idx === straggler)?.copy_won).toBe(1);
  // The copy's job and the first run's job both ended; neither waits in the queue.
  const jobs = await queryServiceDatabase<{ id: string; state: string; lease_token: unknown }>(
    service.dataDir,
    "select id, state, lease_token from jobs where id like ?",
    [`${renderId}:%`],
  );
  expect(jobs.find((job) => job.id === `${renderId}:chunk:${straggler}:copy`)?.state).toBe("done");
  expect(jobs.every((job) => job.state === "done" && job.lease_token === null)).toBe(true);

  // Segments referenced once each, the straggler's from its copy.
  const keys = rows.flatMap((row) => JSON.parse(row.segments_json!) as string[]);
  expect(new Set(keys).size).toBe(keys.length);
  expect(keys).toHaveLength((SECONDS * FPS) / FRAMES_PER_SEGMENT);
  const winner = JSON.parse(rows[straggler]!.segments_json!) as string[];
  expect(winner).toHaveLength(SEGMENTS_PER_CHUNK);
  expect(winner.every((key) => key.includes(`/chunks/${straggler}-copy-1/`))).toBe(true);
  // The join deleted the segments; nothing of the loser is left (the thumbnail stays).
  const userId = (
    await queryServiceDatabase<{ user_id: string }>(
      service.dataDir,
      "select user_id from renders where id = ?",
      [renderId],
    )
  )[0]!.user_id;
  const left = await storedUnder(service, `renders/${userId}/${renderId}/chunks`);
  expect(left.filter((key) => !key.endsWith("/thumbnail.jpg"))).toEqual([]);

  // One join, one charge.
  const lines = logLines(all, renderId);
  expect(lines.filter((line) => line.msg === "join started")).toHaveLength(1);
  const cost = renderCostMilli(SECONDS, "1080p") / 1000;
  expect(record.credits_charged).toBeCloseTo(cost, 6);
  expect((await creditsUsed(service)) - options.creditsBefore).toBeCloseTo(cost, 6);
  // The chunk was started twice (first run and copy), every other chunk once.
  const started = lines.filter((line) => line.msg === "chunk started").map((line) => line.chunk);
  expect([...started].sort()).toEqual([0, 1, 2, 3, straggler].sort());
  expect(lines.filter((line) => line.msg === "chunk started" && line.copy)).toHaveLength(1);

  let speculative = { started: 0, won: 0 };
  for (const each of all) {
    speculative = {
      started:
        speculative.started +
        (await metric(each, "svc_chunk_speculative_total", 'outcome="started"')),
      won: speculative.won + (await metric(each, "svc_chunk_speculative_total", 'outcome="won"')),
    };
  }
  expect(speculative).toEqual({ started: 1, won: 1 });

  const video = join(dir, `${renderId}.mp4`);
  await writeFile(
    video,
    Buffer.from(await (await fetch(record.video_url as string)).arrayBuffer()),
  );
  expect(await frameHashes(video)).toEqual(await reference);
}

/** The loser's last word: it stopped because the copy won, or finished after it, recording nothing. */
function loserEnded(of: ServiceProcess[], renderId: string, chunk: number) {
  return logLines(of, renderId).find(
    (line) =>
      line.chunk === chunk &&
      !line.copy &&
      (line.msg === "chunk abandoned: its other copy finished it first" ||
        (line.msg === "chunk finished" && line.superseded === true)),
  );
}

/** A segment encoder (FFmpeg) that the process `parent` started, and the chunk it encodes. */
async function chunkEncoder(parent: number): Promise<{ pid: number; chunk: number } | undefined> {
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) !== parent) continue;
      const args = (await readFile(`/proc/${entry}/cmdline`, "utf8")).split("\0");
      const segment = args.map((arg) => /segment-(\d+)\.mp4$/.exec(arg)).find(Boolean);
      if (segment && /ffmpeg/.test(args[0]!)) {
        return {
          pid: Number(entry),
          chunk: Math.floor(Number(segment[1]) / SEGMENTS_PER_CHUNK),
        };
      }
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

describe.skipIf(onPostgres)("a straggler chunk on SQLite (one process, two worker slots)", () => {
  it(
    "is run again on the idle slot when its encoder hangs; the copy wins, the render is joined and charged once",
    { timeout: 240_000 },
    async () => {
      const svc = await startService({ jobs: 2, env: ENV });
      services.push(svc);
      const before = await creditsUsed(svc);
      const renderId = await submit(svc);
      const stopped = await waitFor(
        "a chunk's encoder, stopped",
        async () => {
          const encoder = await chunkEncoder(svc.child.pid!);
          try {
            if (encoder) process.kill(encoder.pid, "SIGSTOP");
            return encoder;
          } catch {
            return undefined; // its segment ended meanwhile: the next one
          }
        },
        { timeoutMs: 120_000, intervalMs: 10 },
      );
      const record = await waitForTerminalRender(svc, renderId, 180_000);
      expect(record.status, String(record.failure_message)).toBe("completed");
      // The first run stops as a cancelled one does (its stopped encoder is killed with it), in
      // the cancel test's bound of 10 s after its copy recorded the chunk.
      const ended = await waitFor(
        "the straggler's first run to end",
        async () => loserEnded([svc], renderId, stopped.chunk),
        { timeoutMs: 15_000 },
      );
      const copyDone = logLines([svc], renderId).find(
        (line) => line.msg === "chunk finished" && line.copy,
      )!;
      const stoppedAfterMs = (ended.time as number) - (copyDone.time as number);
      expect(stoppedAfterMs).toBeLessThan(10_000);
      try {
        process.kill(stopped.pid, "SIGCONT");
      } catch {
        // already killed by the abort
      }
      await expectWonOnce({
        renderId,
        record,
        straggler: stopped.chunk,
        creditsBefore: before,
        api: svc,
        all: [svc],
      });
      process.stderr.write(
        `speculative (SQLite): chunk ${stopped.chunk} copied; first run stopped ${stoppedAfterMs} ms after the copy won; ` +
          `${JSON.stringify(logLines([svc], renderId).find((line) => line.msg === "straggler chunk queued a second time (speculative copy)"))}\n`,
      );
    },
  );
});

describe.skipIf(!onPostgres)("a straggler chunk on PostgreSQL + S3 (two processes)", () => {
  it(
    "is run again on the other worker process while its own is stopped; after SIGCONT the first run changes nothing",
    { timeout: 240_000 },
    async () => {
      const w1 = await startService({
        dataDir: join(dir, "w1", "data"),
        jobs: 1,
        env: { ...ENV, SVC_WORKER_NAME: "w1" },
      });
      services.push(w1);
      const w2 = await startService({
        dataDir: join(dir, "w2", "data"),
        jobs: 1,
        databaseUrl: (await suiteDatabase(w1.dataDir))!,
        s3Prefix: w1.s3!.prefix,
        serverArgs: ["--role", "worker"],
        env: { ...ENV, SVC_SERVER_LOCAL_ACCOUNT: "0", SVC_WORKER_NAME: "w2" },
      });
      services.push(w2);
      const before = await creditsUsed(w1);
      const renderId = await submit(w1);
      // w2 in the middle of a chunk: started, frames drawn, not finished.
      const straggler = await waitFor(
        "w2 to be drawing a chunk",
        async () => {
          const lines = logLines([w2], renderId);
          const started = lines.filter((line) => line.msg === "chunk started");
          const finished = lines.filter((line) => line.msg === "chunk finished");
          const running = started.find((s) => !finished.some((f) => f.chunk === s.chunk));
          if (!running) return undefined;
          const row = (await chunkRows(w1, renderId)).find((r) => r.idx === running.chunk);
          // Drawing, and not about to finish (so not stopped inside its finish transaction).
          return row?.state === "rendering" && row.frames_done > 0 && row.frames_done < 15
            ? (running.chunk as number)
            : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 20 },
      );
      w2.child.kill("SIGSTOP");
      const record = await waitForTerminalRender(w1, renderId, 180_000);
      expect(record.status, String(record.failure_message)).toBe("completed");
      expect(
        logLines([w1], renderId).some((line) => line.msg === "chunk started" && line.copy),
      ).toBe(true);

      const continuedAt = Date.now();
      w2.child.kill("SIGCONT");
      const ended = await waitFor("w2's late first run to end", async () =>
        loserEnded([w2], renderId, straggler),
      );
      const endedAfterMs = (ended.time as number) - continuedAt;
      await expectWonOnce({
        renderId,
        record,
        straggler,
        creditsBefore: before,
        api: w1,
        all: [w1, w2],
      });
      process.stderr.write(
        `speculative (PostgreSQL): chunk ${straggler}; w2 ended ${endedAfterMs} ms after SIGCONT: ${ended.msg}\n`,
      );
    },
  );
});
