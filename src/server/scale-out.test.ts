// The scale-out shape on several hosts (issue 17): network namespaces on one bridge stand in for
// machines — `store` (PostgreSQL + the Swift S3 store), `api` (svc server --role api) and two
// workers `w1`, `w2` (--role worker) — each service with its own data dir, every connection
// between them over the bridge, none through 127.0.0.1 or a shared folder. The test process is
// the client on the same network: it uploads to the object store through presigned URLs and talks
// to the API. It checks the acceptance: a 60 s render is cut into chunks that both worker
// hosts render and decodes to the frames of a single-machine render, with audio; a worker
// SIGKILLed mid-chunk costs only that chunk, charged once; an API restarted with 10 renders in
// flight loses none. Needs root for namespaces: a non-root developer run skips with the reason,
// CI (root) never skips.
import { copyFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { frameHashes, probeMedia } from "../engine/testing/probe";
import { renderComposition } from "../engine/render";
import { createNetwork, netnsUnavailable, type Host, type Network } from "./testing/netns";
import { startPostgres, type PostgresServer } from "./testing/postgres";
import { startS3Server, type S3Server } from "./testing/s3-server";
import {
  api,
  startService,
  tempDir,
  uploadProject,
  waitForTerminalRender,
  type ServiceProcess,
} from "./testing/service-process";
import { buildZip, compositionHtml } from "./testing/zip-builder";
import { renderCostMilli } from "./render/credits";
import { waitFor } from "../shared/testing/wait-for";

const inCi = !/^(|0|false|no|off)$/i.test((process.env.CI ?? "").trim());
const unavailable = netnsUnavailable();
if (unavailable && !inCi) console.warn(`scale-out multi-host test skipped: ${unavailable}`);

const TONE = resolve(import.meta.dirname, "../../examples/with-audio/tone.wav");
const PORT = "8000";
// 60 s at 2 fps: 120 frames in segments of 8, four segments (16 s) to a chunk: 4 chunks.
const FPS = 2;
const CHUNK_SECONDS = "16";

/**
 * 60 s, 1920x1080 (the output size), hard edges only: a box moving 12.5 px per frame at 2 fps and
 * stepping through colours, and a tone from 0.5 s. Every frame differs from the one before.
 */
const LONG_COMPOSITION = `<!doctype html>
<html><head><meta charset="utf-8"><style>
  html, body { margin: 0; background: #102030; }
  #box { position: absolute; top: 400px; left: 0; width: 200px; height: 200px;
         animation: slide 60s linear forwards, tint 60s steps(120) forwards; }
  @keyframes slide { from { transform: translateX(0); } to { transform: translateX(1500px); } }
  @keyframes tint { from { background: #e0a020; } to { background: #20a0e0; } }
</style></head>
<body>
  <div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="60">
    <div id="box"></div>
    <audio src="tone.wav" data-start="0.5"></audio>
  </div>
</body></html>
`;

let dir: string;
let network: Network;
let postgres: PostgresServer;
let store: S3Server;
let db: pg.Client;
let databaseUrl: string;
let apiService: ServiceProcess;
const workers: Record<string, ServiceProcess> = {};
let longProject: string;
let longZip: Buffer;
let longAsset: Promise<string> | undefined;
/** The single-machine render of the long project (started in beforeAll, used by the first test). */
let reference: Promise<string>;
const stopReference = new AbortController();

function host(name: string): Host {
  return network.hosts[name]!;
}

/** `svc server` on a host of the test network, with its own data dir and the shared database + bucket. */
function startOnHost(name: string, role: "api" | "worker"): Promise<ServiceProcess> {
  const { address, exec } = host(name);
  return startService({
    dataDir: join(dir, name, "data"),
    jobs: 1,
    storage: store,
    s3Prefix: "scale-out",
    databaseUrl,
    commandPrefix: exec,
    serverArgs: ["--role", role, "--host", address, "--port", PORT],
    env: {
      SVC_SERVER_CHUNK_SECONDS: CHUNK_SECONDS,
      // A dead worker's chunk is offered again within seconds (heartbeats every 2 s; a loaded
      // machine may delay one, not three).
      SVC_SERVER_LEASE_SECONDS: "6",
      SVC_SERVER_SHUTDOWN_GRACE_SECONDS: "1",
      SVC_SERVER_LOCAL_ACCOUNT: role === "api" ? "1" : "0",
      ...(role === "worker" ? { SVC_WORKER_NAME: name } : {}),
    },
  });
}

/** Figures for the run's log (chunks per worker, attempts), for the issue and the benchmarks. */
function reportFigures(line: string): void {
  process.stderr.write(`scale-out: ${line}\n`);
}

/** The structured log lines of a service process (JSON lines; anything else is left out). */
function logLines(service: ServiceProcess): Record<string, unknown>[] {
  return service
    .logs()
    .split("\n")
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

/** The chunk indexes a worker logged `message` for, for one render, across its processes' logs. */
function chunksLogged(logs: ServiceProcess[], renderId: string, message: string): number[] {
  return logs
    .flatMap(logLines)
    .filter((line) => line.renderId === renderId && line.msg === message)
    .map((line) => line.chunk as number);
}

async function credits(): Promise<{ remaining: number; used: number }> {
  const me = await api(apiService, "GET", "/v3/users/me", { key: apiService.apiKey });
  expect(me.status).toBe(200);
  const { credits_remaining: remaining, credits_used: used } = me.body.data.billing;
  return { remaining, used };
}

/** The long project, uploaded once (straight to the object store) for the tests that render it. */
function longAssetId(): Promise<string> {
  longAsset ??= uploadProject(apiService, apiService.apiKey, longZip).then(
    ({ assetId, complete }) => {
      expect(complete.status).toBe(200);
      return assetId;
    },
  );
  return longAsset;
}

async function submit(assetId: string, fps: number): Promise<string> {
  const submitted = await api(apiService, "POST", "/v3/svc/renders", {
    key: apiService.apiKey,
    body: { project: { type: "asset_id", asset_id: assetId }, fps, quality: "draft" },
  });
  expect(submitted.status).toBe(201);
  return submitted.body.data.render_id as string;
}

interface ChunkRow {
  idx: number;
  worker: string | null;
  attempts: number;
  state: string;
  frames_done: number;
}

async function chunkRows(renderId: string): Promise<ChunkRow[]> {
  const result = await db.query<ChunkRow>(
    "select idx, worker, attempts, state, frames_done from render_chunks where render_id = $1 order by idx",
    [renderId],
  );
  return result.rows;
}

describe.skipIf(unavailable !== undefined && !inCi)("the render service on several hosts", () => {
  beforeAll(async () => {
    if (unavailable) throw new Error(`the multi-host test cannot run in CI: ${unavailable}`);
    dir = await tempDir("svc-scale-out-");
    longProject = join(dir, "project");
    await mkdir(longProject);
    await writeFile(join(longProject, "index.html"), LONG_COMPOSITION);
    await copyFile(TONE, join(longProject, "tone.wav"));
    longZip = buildZip([
      { name: "index.html", data: LONG_COMPOSITION, deflate: true },
      { name: "tone.wav", data: await readFile(TONE) },
    ]);
    // The single-machine render: the engine in the test process, while the hosts start.
    reference = renderComposition({
      projectDir: longProject,
      output: join(dir, "reference.mp4"),
      fps: FPS,
      quality: "draft",
      workers: 1,
      thumbnail: false,
      signal: stopReference.signal,
    }).then((result) => result.outputPath);
    reference.catch(() => undefined); // awaited (and reported) by the test that uses it

    network = createNetwork(["store", "api", "w1", "w2"]);
    const storeHost = host("store");
    [postgres, store] = await Promise.all([
      startPostgres({ host: storeHost.address, port: 5432, wrap: storeHost.exec }),
      startS3Server({
        host: storeHost.address,
        port: 8080,
        bucket: "svc-scale-out",
        commandPrefix: storeHost.exec,
      }),
    ]);
    databaseUrl = await postgres.createDatabase("svc");
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    // The API first: it migrates the database and makes the local account.
    apiService = await startOnHost("api", "api");
    [workers.w1, workers.w2] = await Promise.all([
      startOnHost("w1", "worker"),
      startOnHost("w2", "worker"),
    ]);
  }, 240_000);

  afterAll(async () => {
    await db?.end().catch(() => undefined);
    // The hosts' processes go first and at once: their state is thrown away with the network.
    await Promise.all(
      [apiService, ...Object.values(workers)].map((service) =>
        service?.kill("SIGKILL").catch(() => undefined),
      ),
    );
    await Promise.all([store?.stop(), postgres?.stop()]);
    network?.destroy();
    stopReference.abort();
    await reference?.catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it("serves every host on its own address of the test network", async () => {
    expect(new URL(apiService.url).hostname).toBe(host("api").address);
    for (const name of ["w1", "w2"]) {
      expect(new URL(workers[name]!.url).hostname).toBe(host(name).address);
      expect((await api(workers[name]!, "GET", "/readyz")).status).toBe(200);
    }
    expect(new URL(store.endpoint).hostname).toBe(host("store").address);
    expect((await api(apiService, "GET", "/readyz")).status).toBe(200);
  });

  it(
    "renders a 60 s composition in chunks on both worker hosts; it decodes to the frames of a single-machine render, with audio",
    { timeout: 360_000 },
    async () => {
      const before = await credits();
      const renderId = await submit(await longAssetId(), FPS);
      const record = await waitForTerminalRender(apiService, renderId, 300_000);
      expect(record).toMatchObject({ status: "completed", duration: 60 });

      const chunks = await chunkRows(renderId);
      expect(chunks.length).toBeGreaterThanOrEqual(4);
      expect(chunks.every((chunk) => chunk.state === "done" && chunk.attempts === 1)).toBe(true);
      expect(new Set(chunks.map((chunk) => chunk.worker))).toEqual(new Set(["w1", "w2"]));
      // The workers' logs say the same: each chunk finished once, some on each host.
      const finishedOn = (name: string) =>
        chunksLogged([workers[name]!], renderId, "chunk finished");
      expect([...finishedOn("w1"), ...finishedOn("w2")].sort()).toEqual(
        chunks.map((chunk) => chunk.idx),
      );
      expect(finishedOn("w1").length).toBeGreaterThan(0);
      expect(finishedOn("w2").length).toBeGreaterThan(0);

      const video = await fetch(record.video_url);
      expect(video.status).toBe(200);
      const distributed = join(dir, "distributed.mp4");
      await writeFile(distributed, Buffer.from(await video.arrayBuffer()));
      const info = await probeMedia(distributed);
      expect(info.streams.some((stream) => stream.type === "audio")).toBe(true);
      const frames = await frameHashes(distributed);
      expect(frames).toHaveLength(60 * FPS);
      expect(frames).toEqual(await frameHashes(await reference));

      const after = await credits();
      expect(record.credits_charged).toBeGreaterThan(0);
      expect(after.used - before.used).toBeCloseTo(record.credits_charged, 6);
      expect(before.remaining - after.remaining).toBeCloseTo(record.credits_charged, 6);
      reportFigures(
        `60 s render: ${chunks.length} chunks, ` +
          ["w1", "w2"].map((name) => `${name}: ${finishedOn(name).length}`).join(", "),
      );
    },
  );

  it(
    "a worker host SIGKILLed mid-chunk costs only that chunk: it is rendered again, the render completes and is charged once",
    { timeout: 300_000 },
    async () => {
      const before = await credits();
      // 1 fps: 60 frames, four chunks of 16 frames or fewer.
      const renderId = await submit(await longAssetId(), 1);
      const firstW1 = workers.w1!;
      const killedChunk = await waitFor(
        "a chunk being rendered on w1",
        async () => {
          const started = chunksLogged([firstW1], renderId, "chunk started");
          const finished = chunksLogged([firstW1], renderId, "chunk finished");
          if (started.length === 0) return undefined;
          const rows = await chunkRows(renderId);
          return rows.find(
            (row) =>
              started.includes(row.idx) &&
              !finished.includes(row.idx) &&
              row.state === "rendering" &&
              row.frames_done > 0,
          )?.idx;
        },
        { timeoutMs: 180_000, intervalMs: 100 },
      );
      await firstW1.kill("SIGKILL");
      expect(chunksLogged([firstW1], renderId, "chunk finished")).not.toContain(killedChunk);
      // The host comes back (same data dir and address); either worker may take the chunk again.
      workers.w1 = await startOnHost("w1", "worker");

      const record = await waitForTerminalRender(apiService, renderId, 240_000);
      expect(record).toMatchObject({ status: "completed", duration: 60 });
      const chunks = await chunkRows(renderId);
      expect(chunks.length).toBeGreaterThanOrEqual(4);
      expect(chunks.every((chunk) => chunk.state === "done")).toBe(true);
      expect(Object.fromEntries(chunks.map((chunk) => [chunk.idx, chunk.attempts]))).toEqual(
        Object.fromEntries(chunks.map((chunk) => [chunk.idx, chunk.idx === killedChunk ? 2 : 1])),
      );
      const allLogs = [firstW1, workers.w1, workers.w2!];
      const started = chunksLogged(allLogs, renderId, "chunk started").sort();
      expect(started).toEqual([...chunks.map((chunk) => chunk.idx), killedChunk].sort());

      const cost = renderCostMilli(60, "1080p") / 1000;
      expect(record.credits_charged).toBeCloseTo(cost, 6);
      const after = await credits();
      expect(after.used - before.used).toBeCloseTo(cost, 6);
      expect(before.remaining - after.remaining).toBeCloseTo(cost, 6);
      reportFigures(
        `SIGKILL on w1 during chunk ${killedChunk}: attempts ` +
          chunks.map((chunk) => `${chunk.idx}:${chunk.attempts}@${chunk.worker}`).join(" "),
      );
    },
  );

  it(
    "an API host restarted with 10 renders in flight: all 10 complete, each once",
    { timeout: 300_000 },
    async () => {
      const zip = buildZip([
        { name: "index.html", data: compositionHtml({ seconds: 1 }), deflate: true },
      ]);
      const { assetId, complete } = await uploadProject(apiService, apiService.apiKey, zip);
      expect(complete.status).toBe(200);
      const before = await credits();
      const renderIds: string[] = [];
      for (let i = 0; i < 10; i++) renderIds.push(await submit(assetId, FPS));
      const inFlight = await db.query<{ count: string }>(
        "select count(*) from renders where id = any($1) and status in ('queued', 'rendering')",
        [renderIds],
      );
      expect(Number(inFlight.rows[0]!.count)).toBeGreaterThan(0);

      const { url } = apiService;
      await apiService.kill("SIGKILL");
      await expect(fetch(`${url}/healthz`)).rejects.toThrow();
      apiService = await startOnHost("api", "api");
      expect(apiService.url).toBe(url);

      const records = await Promise.all(
        renderIds.map((renderId) => waitForTerminalRender(apiService, renderId, 240_000)),
      );
      const cost = renderCostMilli(1, "1080p") / 1000;
      for (const record of records) {
        expect(record).toMatchObject({ status: "completed", duration: 1 });
        expect(record.credits_charged).toBeCloseTo(cost, 6);
      }
      const after = await credits();
      expect(after.used - before.used).toBeCloseTo(10 * cost, 6);
      expect(before.remaining - after.remaining).toBeCloseTo(10 * cost, 6);
      const jobs = await db.query<{ state: string }>("select state from jobs where id = any($1)", [
        renderIds,
      ]);
      expect(jobs.rows.map((job) => job.state)).toEqual(Array(10).fill("done"));
      reportFigures(`API restart: ${Number(inFlight.rows[0]!.count)} of 10 renders in flight`);
    },
  );
});
