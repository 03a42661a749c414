// Coordination at cluster scale on one machine: N worker processes (`svc server --role worker
// --jobs 1`) against one PostgreSQL, one S3 store (Swift) and one API, rendering a composition
// cut into 200 chunks of a few frames each (fps 1, 4 frames a chunk, 1080p standard: the service's
// defaults, which a worker's spare browser is started for), so the browsers' CPU is not what is
// measured. The workers are started together and the render is submitted once every one has
// announced itself (worker_presence: started, warmed up, spare browser running), as on a cluster
// that is up before work comes. From the database and the workers' own "finished" log lines:
// claim latency (a worker's previous job done -> its next job claimed, while jobs wait), per-chunk
// overhead (a job's time outside capturing its frames) on each worker's first chunk (cold: project
// download + unzip, page open and load, catch-up) and on later ones (warm page, cached project),
// chunks run more than once (retried, or speculative copies of a straggler: counted from "chunk
// started" lines and the join's finished line) and the join of every chunk's segments. First, one
// worker alone renders a short render: the cold overhead one machine pays when it has its cores
// to itself (16 cold starts at once on 2 cores measure the machine). The machine is shared: the
// load average goes with the figures.
//
// Run: npm run bench:scale-cluster -- [--workers 16] [--chunks 200]
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { startPostgres } from "../src/server/testing/postgres";
import { s3ServiceEnv, startS3Server } from "../src/server/testing/s3-server";
import { api, uploadProject, waitForTerminalRender } from "../src/server/testing/service-process";
import { buildZip } from "../src/server/testing/zip-builder";
import { startRole, type RoleProcess } from "./server-roles";

const REPO = resolve(import.meta.dirname, "..");
const { values: flags } = parseArgs({
  options: {
    workers: { type: "string", default: "16" },
    chunks: { type: "string", default: "200" },
  },
});
const WORKERS = Number(flags.workers);
const CHUNKS = Number(flags.chunks);
const FPS = 1;
/** At fps 1 a long render's segments are 4 frames (4 s): one segment a chunk. */
const SECONDS = CHUNKS * 4;

/** A box sliding across the frame for `seconds` (a CSS animation: chunks jump to their start). */
const composition = (
  seconds: number,
) => `<!doctype html><html><head><style>html,body{margin:0;background:#102030}
#box{position:absolute;top:400px;left:0;width:200px;height:200px;background:#e0a020;
animation:slide ${seconds}s linear forwards}@keyframes slide{to{transform:translateX(1500px)}}</style></head>
<body><div id="root" data-composition-id="main" data-width="1920" data-height="1080" data-duration="${seconds}"
 style="position:relative;width:1920px;height:1080px;overflow:hidden"><div id="box"></div></div></body></html>`;
/** Chunks of the render the lone worker runs first. */
const SOLO_CHUNKS = 6;

interface Finished {
  job: "chunk" | "join" | "whole";
  chunk?: number;
  worker: string;
  claimedAt: number;
  endAt: number;
  totalMs: number;
  phasesMs: Record<string, number | undefined>;
  warmPage?: boolean;
  projectCached?: boolean;
  /** The join's: chunks started a second time as stragglers, and how many of those copies won. */
  speculative?: number;
  speculativeWon?: number;
}

function finishedLines(log: string, renderId: string): Finished[] {
  const out: Finished[] = [];
  for (const line of log.split("\n")) {
    if (!line.includes(renderId) || !line.includes('"totalMs"')) continue;
    const entry = JSON.parse(line) as Omit<Finished, "claimedAt" | "endAt"> & {
      time: number;
      finished: boolean;
    };
    if (!entry.finished) continue;
    out.push({ ...entry, claimedAt: entry.time - entry.totalMs, endAt: entry.time });
  }
  return out;
}

/** The "finished" lines of a render's jobs; the join logs its own after completing the render. */
async function finishedJobs(workers: RoleProcess[], renderId: string): Promise<Finished[]> {
  let jobs = workers.flatMap((worker) => finishedLines(worker.log(), renderId));
  for (let waited = 0; !jobs.some((job) => job.job === "join") && waited < 600; waited++) {
    await new Promise((done) => setTimeout(done, 100));
    jobs = workers.flatMap((worker) => finishedLines(worker.log(), renderId));
  }
  return jobs;
}

/** Each worker's first chunk job of the render. */
function firstChunkOfEachWorker(jobs: Finished[]): Finished[] {
  const first = new Map<string, Finished>();
  for (const job of jobs) {
    if (job.job !== "chunk") continue;
    const seen = first.get(job.worker);
    if (!seen || job.claimedAt < seen.claimedAt) first.set(job.worker, job);
  }
  return [...first.values()];
}

const median = (values: number[]) =>
  values.length === 0 ? NaN : [...values].sort((a, b) => a - b)[values.length >> 1]!;
const s2 = (ms: number) => (ms / 1000).toFixed(2);

/** A render of `composition` on the running workers: its id once it completed, and the load. */
async function renderOnce(
  apiProcess: RoleProcess,
  key: string,
  assetId: string,
): Promise<{ renderId: string; load: number }> {
  const load = loadavg()[0]!;
  const submitted = await api(apiProcess, "POST", "/v3/svc/renders", {
    key,
    body: {
      project: { type: "asset_id", asset_id: assetId },
      fps: FPS,
      title: "cluster",
    },
  });
  if (submitted.status !== 201) throw new Error(`submit: ${JSON.stringify(submitted.body)}`);
  const renderId = submitted.body.data.render_id as string;
  const record = await waitForTerminalRender(
    { url: apiProcess.url, apiKey: key },
    renderId,
    3_600_000,
  );
  if (record.status !== "completed") throw new Error(`render ${record.status}`);
  return { renderId, load };
}

/** Waits until `count` workers have announced themselves: started, warmed up, ready to claim. */
async function waitForWorkers(db: pg.Client, count: number): Promise<number> {
  const began = Date.now();
  for (;;) {
    const { rows } = await db.query<{ n: string }>("select count(*) as n from worker_presence");
    if (Number(rows[0]!.n) >= count) return Date.now() - began;
    if (Date.now() - began > 600_000)
      throw new Error(`only ${rows[0]!.n} of ${count} workers ready`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

/** A job's time outside capturing its frames. */
function overhead(job: Finished): number {
  const p = job.phasesMs;
  const capture = (p.finishing ?? 0) - (p.firstFrame ?? p.finishing ?? 0);
  return job.totalMs - capture;
}

/** Where a cold chunk's overhead goes (medians, s): download, page open, catch-up, after capture. */
function coldBreakdown(jobs: Finished[]): Record<string, number> {
  const part = (f: (p: Finished["phasesMs"], job: Finished) => number) =>
    median(jobs.map((job) => f(job.phasesMs, job))) / 1000;
  return {
    projectS: part((p) => p.downloaded ?? 0),
    pageOpenS: part((p) => (p.capturing ?? 0) - (p.downloaded ?? 0)),
    catchUpS: part((p) => (p.firstFrame ?? 0) - (p.capturing ?? 0)),
    afterCaptureS: part((p, job) => job.totalMs - (p.finishing ?? job.totalMs)),
  };
}

const work = await mkdtemp(join(tmpdir(), "svc-bench-cluster-"));
const [postgres, store] = await Promise.all([startPostgres(), startS3Server()]);
const processes: RoleProcess[] = [];
let db: pg.Client | undefined;
try {
  const databaseUrl = await postgres.createDatabase("svc_bench_cluster");
  const shared = {
    ...s3ServiceEnv(store, "bench-cluster"),
    SVC_DATABASE_URL: databaseUrl,
    SVC_SERVER_LOG_LEVEL: "info",
    SVC_SERVER_RATE_LIMIT_PER_MINUTE: "0",
    SVC_SERVER_CHUNK_SECONDS: "1",
    SVC_SERVER_MAX_CHUNKS: String(CHUNKS * 2),
  };
  const apiProcess = await startRole("api", join(work, "api"), {
    ...shared,
    SVC_SERVER_LOCAL_ACCOUNT: "1",
  });
  processes.push(apiProcess);
  db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const key = (
    JSON.parse(await readFile(join(apiProcess.dataDir, "credentials"), "utf8")) as {
      api_key: string;
    }
  ).api_key;
  const upload = async (seconds: number) =>
    (
      await uploadProject(
        apiProcess,
        key,
        buildZip([{ name: "index.html", data: composition(seconds) }]),
      )
    ).assetId;

  // One worker alone (its own cores, as each machine of a real cluster has): what its first chunk
  // pays, the cold overhead per machine.
  const soloAsset = await upload(SOLO_CHUNKS * 4);
  const solo = await startRole("worker", join(work, "solo"), {
    ...shared,
    SVC_WORKER_NAME: "solo",
  });
  const soloReadyMs = await waitForWorkers(db, 1);
  const soloRun = await renderOnce(apiProcess, key, soloAsset);
  const soloJobs = await finishedJobs([solo], soloRun.renderId);
  await solo.stop();
  await db.query("delete from worker_presence");
  const soloFirst = firstChunkOfEachWorker(soloJobs);

  // N workers started together, all ready before the render is submitted.
  const assetId = await upload(SECONDS);
  const startedAt = Date.now();
  const workers = await Promise.all(
    Array.from({ length: WORKERS }, (_, i) =>
      startRole("worker", join(work, `w${i + 1}`), { ...shared, SVC_WORKER_NAME: `w${i + 1}` }),
    ),
  );
  processes.push(...workers);
  await waitForWorkers(db, WORKERS);
  const workersReadyS = (Date.now() - startedAt) / 1000;
  const { renderId, load } = await renderOnce(apiProcess, key, assetId);
  const render = (
    await db.query<{ created_ms: string; completed_ms: string; chunk_count: number }>(
      "select created_ms, completed_ms, chunk_count from renders where id = $1",
      [renderId],
    )
  ).rows[0]!;
  const lastChunk = (
    await db.query<{ last: string }>(
      "select max(completed_ms) as last from render_chunks where render_id = $1",
      [renderId],
    )
  ).rows[0]!;
  const attempts = (
    await db.query<{ attempts: number }>(
      "select attempts from render_chunks where render_id = $1",
      [renderId],
    )
  ).rows;
  const jobs = await finishedJobs(workers, renderId);
  const started = workers
    .map((worker) => worker.log().split("\n"))
    .flat()
    .filter((line) => line.includes(renderId) && line.includes('"chunk started"')).length;
  const chunks = jobs.filter((job) => job.job === "chunk");
  const join_ = jobs.find((job) => job.job === "join");
  // Claim latency: a worker's job done -> its next claim, while chunks were still waiting.
  const gaps: number[] = [];
  for (const worker of workers.map((_, i) => `w${i + 1}`)) {
    const own = chunks
      .filter((job) => job.worker === worker)
      .sort((a, b) => a.claimedAt - b.claimedAt);
    for (let i = 1; i < own.length; i++) gaps.push(own[i]!.claimedAt - own[i - 1]!.endAt);
  }
  // Cold: the first chunk each worker ran (its browser was started at warm-up, its page and project
  // not); warm: later chunks that started from the page the previous one left open.
  const firsts = firstChunkOfEachWorker(chunks);
  const cold = firsts.map(overhead);
  const warm = chunks.filter((job) => job.warmPage && !firsts.includes(job)).map(overhead);
  const summary = {
    workers: WORKERS,
    chunks: render.chunk_count,
    wallS: (Number(render.completed_ms) - Number(render.created_ms)) / 1000,
    workersReadyS,
    loadAtStart: load,
    loadAtEnd: loadavg()[0]!,
    claimLatencyMedianMs: median(gaps),
    claimLatencyP90Ms: [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length * 0.9)] ?? NaN,
    overheadColdMedianS: median(cold) / 1000,
    overheadColdMaxS: Math.max(...cold) / 1000,
    coldBreakdown: coldBreakdown(firsts),
    overheadWarmMedianS: median(warm) / 1000,
    coldChunks: cold.length,
    warmChunks: warm.length,
    solo: {
      readyS: soloReadyMs / 1000,
      load: soloRun.load,
      overheadColdS: median(soloFirst.map(overhead)) / 1000,
      coldBreakdown: coldBreakdown(soloFirst),
      overheadWarmMedianS:
        median(soloJobs.filter((job) => job.job === "chunk" && job.warmPage).map(overhead)) / 1000,
    },
    chunksStarted: started,
    chunksRetried: attempts.filter((row) => row.attempts > 1).length,
    chunksSpeculative: join_?.speculative ?? 0,
    speculativeWon: join_?.speculativeWon ?? 0,
    joinS: join_ ? join_.totalMs / 1000 : NaN,
    /** Last chunk done -> render completed (database): the join's claim and work until commit. */
    lastChunkToCompletedS: (Number(render.completed_ms) - Number(lastChunk.last)) / 1000,
    joinPhasesMs: join_?.phasesMs,
  };
  const parts = (b: Record<string, number>) =>
    Object.entries(b)
      .map(([name, value]) => `${name.replace(/S$/, "")} ${value.toFixed(2)}`)
      .join(", ");
  console.log(
    `1 worker alone (load ${soloRun.load.toFixed(1)}): ready ${summary.solo.readyS.toFixed(1)} s after start; first chunk overhead ${summary.solo.overheadColdS.toFixed(2)} s (${parts(summary.solo.coldBreakdown)}), warm ${summary.solo.overheadWarmMedianS.toFixed(2)} s\n` +
      `${WORKERS} workers, ${summary.chunks} chunks: wall ${summary.wallS.toFixed(1)} s (load ${load.toFixed(1)} -> ${summary.loadAtEnd.toFixed(1)}); all ready ${workersReadyS.toFixed(1)} s after start\n` +
      `  claim latency median ${summary.claimLatencyMedianMs.toFixed(0)} ms, p90 ${summary.claimLatencyP90Ms.toFixed(0)} ms (${gaps.length} claims while work waited)\n` +
      `  per-chunk overhead: cold (first chunk of each worker) median ${summary.overheadColdMedianS.toFixed(2)} s, max ${summary.overheadColdMaxS.toFixed(2)} s (${cold.length}; ${parts(summary.coldBreakdown)}), warm median ${summary.overheadWarmMedianS.toFixed(2)} s (${warm.length})\n` +
      `  chunk jobs started ${started} for ${summary.chunks} chunks, ${summary.chunksRetried} retried, ${summary.chunksSpeculative} speculative (${summary.speculativeWon} copies won)\n` +
      `  last chunk -> render completed ${summary.lastChunkToCompletedS.toFixed(2)} s; join job of ${summary.chunks} chunks: ${summary.joinS.toFixed(2)} s (phases ms ${JSON.stringify(join_?.phasesMs)}); median chunk ${s2(median(chunks.map((job) => job.totalMs)))} s`,
  );
  await mkdir(join(REPO, "bench/results"), { recursive: true });
  const file = join(
    REPO,
    "bench/results",
    `scale-cluster-${new Date().toISOString().replace(/[:.]/g, "-")}.json`,
  );
  await writeFile(file, `${JSON.stringify({ summary, jobs, soloJobs }, null, 2)}\n`);
  console.log(`results: ${file}`);
} finally {
  await db?.end().catch(() => undefined);
  for (const running of processes.reverse()) await running.stop();
  await Promise.all([store.stop(), postgres.stop()]);
  await rm(work, { recursive: true, force: true });
}
