// Scale-out: the wall time of one 60 s composition (bench/compositions/scale-60s) rendered by the
// scale-out shape — one `svc server --role api`, N × `svc server --role worker`, PostgreSQL and an
// S3 store (Swift), all started here on loopback — with 1 and with 2 worker processes, and the
// same composition rendered whole (SVC_SERVER_MAX_CHUNKS=1, one job) on 1 worker as the baseline
// of what chunking costs. Configurations alternate within each rep (1, 2, whole, 1, 2, whole...),
// worker processes start fresh for each render, whole-machine CPU (/proc/stat) goes with each.
//
// Where a job's time goes comes from the workers' own logs: each job's "finished" line carries
// phasesMs (after the claim: capture start, capture end, encoders drained, uploads done) and
// totalMs. Per-chunk overhead = a chunk's time outside capturing frames (claim, project download
// and unzip, browser start and page load, encoder drain, segment upload, commit), compared with
// the same outside-capture time of the whole render, which pays it once. From the measured chunk
// and join times, a model predicts the wall time with 10 and 100 workers (one per machine).
//
// Run: npm run bench:scale -- [--reps 2] [--fps 10] [--quality standard] [--resolution 1080p]
//      [--chunk-seconds 10] [--max-chunks 32] [--configs one,two,whole]
// Results: a table on stdout and JSON under bench/results/.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { planChunks, segmentLength } from "../src/engine/stages/plan";
import { probeMedia } from "../src/engine/testing/probe";
import { startPostgres } from "../src/server/testing/postgres";
import { s3ServiceEnv, startS3Server } from "../src/server/testing/s3-server";
import { api, uploadProject, waitForTerminalRender } from "../src/server/testing/service-process";
import { buildZip } from "../src/server/testing/zip-builder";
import { busyBetween, cpuTimes } from "./cpu";
import { startRole, type RoleProcess } from "./server-roles";

const REPO = resolve(import.meta.dirname, "..");
const COMPOSITION_DIR = join(REPO, "bench/compositions/scale-60s");
const TONE = join(REPO, "examples/with-audio/tone.wav");
const DURATION_SECONDS = 60;

const { values: flags } = parseArgs({
  options: {
    reps: { type: "string", default: "2" },
    fps: { type: "string", default: "10" },
    quality: { type: "string", default: "standard" },
    resolution: { type: "string", default: "1080p" },
    "chunk-seconds": { type: "string", default: "10" },
    "max-chunks": { type: "string", default: "32" },
    configs: { type: "string", default: "one,two,whole" },
  },
});
const REPS = Number(flags.reps);
const FPS = Number(flags.fps);
const CHUNK_SECONDS = Number(flags["chunk-seconds"]);
const MAX_CHUNKS = Number(flags["max-chunks"]);

interface Config {
  name: string;
  workers: number;
  /** Rendered through the API that cuts renders into chunks, or the one that renders whole. */
  chunked: boolean;
}
const CONFIGS: Record<string, Config> = {
  one: { name: "1 worker", workers: 1, chunked: true },
  two: { name: "2 workers", workers: 2, chunked: true },
  whole: { name: "whole, 1 worker", workers: 1, chunked: false },
};
const chosen = flags.configs!.split(",").map((name) => {
  const config = CONFIGS[name.trim()];
  if (!config) throw new Error(`--configs: unknown ${name}; use one, two, whole`);
  return config;
});

/** One job's "finished" line of a worker log. */
interface JobLog {
  kind: "whole" | "chunk" | "join";
  chunk: number | undefined;
  worker: string;
  /** Wall-clock ms of the claim. */
  claimedAt: number;
  totalMs: number;
  phasesMs: Partial<
    Record<"capturing" | "firstFrame" | "finishing" | "downloaded" | "rendered" | "stored", number>
  >;
}

/** A job's time split: frames captured vs everything else, seconds. */
interface JobSplit {
  kind: JobLog["kind"];
  chunk: number | undefined;
  worker: string;
  frames: number;
  /** The job's first frame in the video (0 for whole and join). */
  startFrame: number;
  /** From the render's creation (whole, chunks) or the last chunk's end (join) to the claim. */
  waitS: number;
  totalS: number;
  /** Claim -> page ready: read the render, download + unzip the project, browser, page load. */
  setupS: number;
  /** A chunk's page stepped through every earlier frame time and 5 frames drawn, thrown away. */
  catchUpS: number;
  /** Capturing and encoding this job's own frames. */
  captureS: number;
  /** Encoders drain (+ the thumbnail), then the uploads of segments / video. */
  drainS: number;
  uploadS: number;
  /** Join only: downloading the segments. */
  downloadS: number;
  /** After the uploads: the completion's transaction (and the join's enqueue). */
  commitS: number;
  /** Everything but captureS. */
  overheadS: number;
}

interface Trial {
  config: string;
  rep: number;
  renderId: string;
  /** Render created -> completed (database timestamps), seconds. */
  wallS: number;
  /** Render created -> first job claimed. */
  startupS: number;
  cpuBusy: number;
  load1: number;
  chunks: number;
  jobs: JobSplit[];
  video: { durationS: number; frames: number | undefined; audio: boolean };
}

const seconds = (ms: number) => ms / 1000;

function splitJob(log: JobLog, frames: number, startFrame: number, availableAt: number): JobSplit {
  const p = log.phasesMs;
  const end = log.totalMs;
  const capturing = p.capturing ?? 0;
  const finishing = p.finishing ?? capturing;
  const firstFrame = p.firstFrame ?? capturing;
  const rendered = p.rendered ?? end;
  const stored = p.stored ?? end;
  // firstFrame is one frame (and at most 100 ms of progress throttling) after the catch-up.
  const frameMs = frames > 1 ? (finishing - firstFrame) / (frames - 1) : 0;
  const catchUpS = log.kind === "join" ? 0 : Math.max(0, seconds(firstFrame - capturing - frameMs));
  const captureS = log.kind === "join" ? 0 : seconds(finishing - capturing) - catchUpS;
  return {
    kind: log.kind,
    chunk: log.chunk,
    worker: log.worker,
    frames,
    startFrame,
    waitS: seconds(log.claimedAt - availableAt),
    totalS: seconds(end),
    setupS: log.kind === "join" ? 0 : seconds(capturing),
    catchUpS,
    captureS,
    drainS:
      log.kind === "join" ? seconds(rendered - (p.downloaded ?? 0)) : seconds(rendered - finishing),
    uploadS: seconds(stored - rendered),
    downloadS: log.kind === "join" ? seconds(p.downloaded ?? 0) : 0,
    commitS: seconds(end - stored),
    overheadS: seconds(end) - captureS,
  };
}

/** The "finished" lines of one render's jobs in a worker's log (pino JSON on stderr). */
function jobLogs(log: string, renderId: string): JobLog[] {
  const jobs: JobLog[] = [];
  for (const line of log.split("\n")) {
    if (!line.includes(renderId) || !line.includes('"totalMs"')) continue;
    const entry = JSON.parse(line) as {
      time: number;
      renderId: string;
      job: JobLog["kind"];
      chunk?: number;
      worker: string;
      finished: boolean;
      totalMs: number;
      phasesMs: JobLog["phasesMs"];
    };
    if (entry.renderId !== renderId || !entry.finished) continue;
    jobs.push({
      kind: entry.job,
      chunk: entry.chunk,
      worker: entry.worker,
      claimedAt: entry.time - entry.totalMs,
      totalMs: entry.totalMs,
      phasesMs: entry.phasesMs,
    });
  }
  return jobs;
}

function mean(values: number[]): number {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const f1 = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : "-");

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), "svc-bench-scale-"));
  console.log(
    `starting PostgreSQL and Swift (S3) on loopback; fps ${FPS}, ${flags.quality}, ${flags.resolution}, ` +
      `chunk seconds ${CHUNK_SECONDS}, max chunks ${MAX_CHUNKS}, reps ${REPS}`,
  );
  const [postgres, store] = await Promise.all([startPostgres(), startS3Server()]);
  const processes: RoleProcess[] = [];
  let db: pg.Client | undefined;
  try {
    const databaseUrl = await postgres.createDatabase("svc_bench_scale");
    const shared = {
      ...s3ServiceEnv(store, "bench-scale"),
      SVC_DATABASE_URL: databaseUrl,
      SVC_SERVER_LOG_LEVEL: "info",
      SVC_SERVER_RATE_LIMIT_PER_MINUTE: "0",
      SVC_SERVER_CHUNK_SECONDS: String(CHUNK_SECONDS),
      SVC_SERVER_MAX_CHUNKS: String(MAX_CHUNKS),
    };
    // Two API processes on the same database: one cuts renders into chunks, one renders whole.
    const chunkedApi = await startRole("api", join(work, "api"), {
      ...shared,
      SVC_SERVER_LOCAL_ACCOUNT: "1",
    });
    processes.push(chunkedApi);
    const wholeApi = await startRole("api", join(work, "api-whole"), {
      ...shared,
      SVC_SERVER_MAX_CHUNKS: "1",
    });
    processes.push(wholeApi);
    const credentials = JSON.parse(
      await readFile(join(chunkedApi.dataDir, "credentials"), "utf8"),
    ) as { api_key: string };
    const key = credentials.api_key;
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();

    const zip = buildZip([
      { name: "index.html", data: await readFile(join(COMPOSITION_DIR, "index.html")) },
      { name: "tone.wav", data: await readFile(TONE) },
    ]);
    const { assetId, complete } = await uploadProject(chunkedApi, key, zip);
    if (complete.status !== 200) throw new Error(`upload: ${JSON.stringify(complete.body)}`);

    const frames = DURATION_SECONDS * FPS;
    const plan = planChunks(frames, FPS, { chunkSeconds: CHUNK_SECONDS, maxChunks: MAX_CHUNKS });
    console.log(
      `${frames} frames, segments of ${segmentLength(frames, FPS)} frames, ` +
        `${plan.length} chunks of ${plan.map((chunk) => chunk.frameCount).join("/")} frames`,
    );

    const trials: Trial[] = [];
    let workerSerial = 0;
    for (let rep = 1; rep <= REPS; rep++) {
      for (const config of chosen) {
        const workers = await Promise.all(
          Array.from({ length: config.workers }, () => {
            const name = `w${++workerSerial}`;
            return startRole("worker", join(work, name), { ...shared, SVC_WORKER_NAME: name });
          }),
        );
        processes.push(...workers);
        const target = config.chunked ? chunkedApi : wholeApi;
        const cpuBefore = cpuTimes();
        const submitted = await api(target, "POST", "/v3/svc/renders", {
          key,
          body: {
            project: { type: "asset_id", asset_id: assetId },
            fps: FPS,
            quality: flags.quality,
            resolution: flags.resolution,
            title: `scale ${config.name} rep ${rep}`,
          },
        });
        if (submitted.status !== 201) {
          throw new Error(`submit: ${submitted.status} ${JSON.stringify(submitted.body)}`);
        }
        const renderId = submitted.body.data.render_id as string;
        const record = await waitForTerminalRender(
          { url: target.url, apiKey: key },
          renderId,
          3_600_000,
        );
        const cpuAfter = cpuTimes();
        for (const worker of workers) {
          await worker.stop();
          processes.splice(processes.indexOf(worker), 1);
        }
        if (record.status !== "completed") {
          throw new Error(`render ${renderId} ${record.status}: ${JSON.stringify(record)}`);
        }
        trials.push(
          await measure(db, config, rep, renderId, record, workers, {
            cpuBusy: busyBetween(cpuBefore, cpuAfter),
          }),
        );
        const trial = trials.at(-1)!;
        console.log(
          `rep ${rep} ${config.name.padEnd(16)} wall ${f1(trial.wallS).padStart(6)} s  ` +
            `startup ${f1(trial.startupS)} s  chunks ${trial.chunks}  ` +
            `machine CPU ${(trial.cpuBusy * 100).toFixed(0)}%  load ${trial.load1.toFixed(1)}  ` +
            `video ${trial.video.durationS.toFixed(2)} s${trial.video.audio ? " + audio" : " NO AUDIO"}`,
        );
        for (const workerProcess of workers)
          await rm(workerProcess.dataDir, { recursive: true, force: true });
      }
    }
    const summary = summarise(trials, plan.length, frames);
    printSummary(summary);
    await mkdir(join(REPO, "bench/results"), { recursive: true });
    const file = join(
      REPO,
      "bench/results",
      `scale-${new Date().toISOString().replace(/[:.]/g, "-")}.json`,
    );
    await writeFile(file, `${JSON.stringify({ flags, frames, plan, trials, summary }, null, 2)}\n`);
    console.log(`\nresults: ${file}`);
  } finally {
    await db?.end().catch(() => undefined);
    for (const running of processes.reverse()) await running.stop();
    await Promise.all([store.stop(), postgres.stop()]);
    await rm(work, { recursive: true, force: true });
  }
}

async function measure(
  db: pg.Client,
  config: Config,
  rep: number,
  renderId: string,
  record: { video_url: string },
  workers: RoleProcess[],
  machine: { cpuBusy: number },
): Promise<Trial> {
  const render = (
    await db.query<{ created_ms: string; completed_ms: string; chunk_count: number | null }>(
      "select created_ms, completed_ms, chunk_count from renders where id = $1",
      [renderId],
    )
  ).rows[0]!;
  const chunkRows = (
    await db.query<{ idx: number; first_frame: number; frame_count: number; completed_ms: string }>(
      "select idx, first_frame, frame_count, completed_ms from render_chunks where render_id = $1 order by idx",
      [renderId],
    )
  ).rows;
  const createdAt = Number(render.created_ms);
  const logs = workers.flatMap((worker) => jobLogs(worker.log(), renderId));
  const lastChunkAt = Math.max(...chunkRows.map((row) => Number(row.completed_ms)));
  const totalFrames = DURATION_SECONDS * FPS;
  const jobs = logs
    .map((log) => {
      const frames =
        log.kind === "chunk"
          ? chunkRows.find((row) => row.idx === log.chunk)!.frame_count
          : log.kind === "whole"
            ? totalFrames
            : 0;
      const startFrame =
        log.kind === "chunk" ? chunkRows.find((row) => row.idx === log.chunk)!.first_frame : 0;
      return splitJob(log, frames, startFrame, log.kind === "join" ? lastChunkAt : createdAt);
    })
    .sort(
      (a, b) =>
        (a.chunk ?? (a.kind === "join" ? 1e9 : -1)) - (b.chunk ?? (b.kind === "join" ? 1e9 : -1)),
    );
  const expectedJobs = chunkRows.length > 0 ? chunkRows.length + 1 : 1;
  if (jobs.length !== expectedJobs) {
    throw new Error(
      `render ${renderId}: ${jobs.length} finished jobs in the logs, ${expectedJobs} expected`,
    );
  }
  const video = await probeVideo(record.video_url);
  return {
    config: config.name,
    rep,
    renderId,
    wallS: seconds(Number(render.completed_ms) - createdAt),
    startupS: Math.min(...jobs.filter((job) => job.kind !== "join").map((job) => job.waitS)),
    cpuBusy: machine.cpuBusy,
    load1: loadavg()[0]!,
    chunks: render.chunk_count ?? 1,
    jobs,
    video,
  };
}

async function probeVideo(url: string): Promise<Trial["video"]> {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-scale-video-"));
  try {
    const response = await fetch(url);
    if (response.status !== 200) throw new Error(`video download: ${response.status}`);
    const file = join(dir, "video.mp4");
    await writeFile(file, Buffer.from(await response.arrayBuffer()));
    const info = await probeMedia(file);
    const stream = info.streams.find((s) => s.type === "video");
    return {
      durationS: info.durationSeconds,
      frames: stream?.frames,
      audio: info.streams.some((s) => s.type === "audio"),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface Summary {
  byConfig: Record<string, { wallS: number[]; medianWallS: number; medianCpuBusy: number }>;
  speedup2: number;
  chunk: {
    /** Means over every chunk of the 1-worker renders (one chunk at a time on the machine). */
    setupS: number;
    catchUpS: number;
    captureS: number;
    drainS: number;
    uploadS: number;
    commitS: number;
    waitS: number;
    overheadS: number;
    capturePerFrameS: number;
  };
  whole: { overheadS: number; captureS: number; capturePerFrameS: number; totalS: number };
  join: { waitS: number; downloadS: number; muxS: number; uploadS: number; totalS: number };
  startupS: number;
  /** (sum of chunk times + join) - whole render time, per chunk beyond the first. */
  chunkingCostPerExtraChunkS: number;
  model: { fixedS: number; prerollS: number; catchUpPerEarlierFrameS: number; joinS: number };
  predictions: Prediction[];
}

interface Prediction {
  workers: number;
  chunks: number;
  framesPerChunk: number;
  waves: number;
  wallS: number;
  note: string;
}

function summarise(trials: Trial[], chunkCount: number, frames: number): Summary {
  const byConfig: Summary["byConfig"] = {};
  for (const trial of trials) {
    const entry = (byConfig[trial.config] ??= { wallS: [], medianWallS: 0, medianCpuBusy: 0 });
    entry.wallS.push(trial.wallS);
  }
  for (const [name, entry] of Object.entries(byConfig)) {
    entry.medianWallS = median(entry.wallS);
    entry.medianCpuBusy = median(trials.filter((t) => t.config === name).map((t) => t.cpuBusy));
  }
  const one = trials.filter((t) => t.config === CONFIGS.one!.name);
  const wholes = trials.filter((t) => t.config === CONFIGS.whole!.name);
  const chunkJobs = one.flatMap((t) => t.jobs.filter((job) => job.kind === "chunk"));
  const joinJobs = trials.flatMap((t) => t.jobs.filter((job) => job.kind === "join"));
  const wholeJobs = wholes.flatMap((t) => t.jobs.filter((job) => job.kind === "whole"));
  const avg = (jobs: JobSplit[], field: keyof JobSplit) =>
    mean(jobs.map((job) => job[field] as number));
  const chunk = {
    setupS: avg(chunkJobs, "setupS"),
    catchUpS: avg(chunkJobs, "catchUpS"),
    captureS: avg(chunkJobs, "captureS"),
    drainS: avg(chunkJobs, "drainS"),
    uploadS: avg(chunkJobs, "uploadS"),
    commitS: avg(chunkJobs, "commitS"),
    // A chunk after the first waits for this worker to finish the one before: only the first
    // chunk's wait is queue latency; the others' are zero by construction here.
    waitS: mean(
      one.map((t) => Math.min(...t.jobs.filter((j) => j.kind === "chunk").map((j) => j.waitS))),
    ),
    overheadS: avg(chunkJobs, "overheadS"),
    capturePerFrameS: mean(chunkJobs.map((job) => job.captureS / job.frames)),
  };
  const whole = {
    overheadS: avg(wholeJobs, "overheadS"),
    captureS: avg(wholeJobs, "captureS"),
    capturePerFrameS: avg(wholeJobs, "captureS") / frames,
    totalS: avg(wholeJobs, "totalS"),
  };
  const join = {
    waitS: avg(joinJobs, "waitS"),
    downloadS: avg(joinJobs, "downloadS"),
    muxS: avg(joinJobs, "drainS"),
    uploadS: avg(joinJobs, "uploadS"),
    totalS: avg(joinJobs, "totalS"),
  };
  const startupS = mean(trials.map((t) => t.startupS));
  const chunkingCost =
    one.length > 0 && wholes.length > 0
      ? (mean(one.map((t) => t.jobs.reduce((sum, job) => sum + job.totalS, 0))) - whole.totalS) /
        Math.max(1, chunkCount - 1)
      : NaN;
  const speedup2 =
    (byConfig[CONFIGS.one!.name]?.medianWallS ?? NaN) /
    (byConfig[CONFIGS.two!.name]?.medianWallS ?? NaN);
  // The model: one worker per machine of this machine's speed (the 1-worker renders, where the
  // worker has the machine to itself). A chunk takes the fixed overhead (setup, drain, upload,
  // commit), its catch-up (5 frames drawn + the page stepped through every earlier frame time:
  // grows with the chunk's start) and its frames at the measured capture rate. Workers take the
  // chunks in order as they become free (ceil(chunks/N) waves of equal chunks); then the join.
  const fixedS = chunk.setupS + chunk.drainS + chunk.uploadS + chunk.commitS;
  const prerollS = 5 * chunk.capturePerFrameS;
  const later = chunkJobs.filter((job) => job.startFrame > 0);
  const catchUpPerEarlierFrameS = Math.max(
    0,
    mean(later.map((job) => (job.catchUpS - prerollS) / job.startFrame)),
  );
  const chunkTime = (c: { firstFrame: number; frameCount: number }) =>
    fixedS +
    (c.firstFrame > 0 ? prerollS + c.firstFrame * catchUpPerEarlierFrameS : 0) +
    c.frameCount * chunk.capturePerFrameS;
  const joinS = join.waitS + join.totalS;
  const predict = (workers: number, chunkSeconds: number, note: string): Prediction => {
    const list = planChunks(frames, FPS, { chunkSeconds, maxChunks: MAX_CHUNKS });
    const free = Array.from({ length: Math.min(workers, list.length) }, () => 0);
    for (const c of list) {
      const next = free.indexOf(Math.min(...free));
      free[next] = free[next]! + chunkTime(c);
    }
    return {
      workers,
      chunks: list.length,
      framesPerChunk: Math.max(...list.map((c) => c.frameCount)),
      waves: Math.ceil(list.length / workers),
      wallS: startupS + Math.max(...free) + joinS,
      note,
    };
  };
  const segmentSeconds = segmentLength(frames, FPS) / FPS;
  const predictions = [1, 2, 10, 100].flatMap((workers) => [
    predict(workers, CHUNK_SECONDS, `chunk seconds ${CHUNK_SECONDS}`),
    predict(workers, segmentSeconds, `chunk seconds ${segmentSeconds.toFixed(2)} (one segment)`),
  ]);
  return {
    byConfig,
    speedup2,
    chunk,
    whole,
    join,
    startupS,
    chunkingCostPerExtraChunkS: chunkingCost,
    model: { fixedS, prerollS, catchUpPerEarlierFrameS, joinS },
    predictions,
  };
}

function printSummary(summary: Summary): void {
  console.log("\nWall time, render created -> completed (median of reps):");
  for (const [name, entry] of Object.entries(summary.byConfig)) {
    console.log(
      `  ${name.padEnd(16)} ${f1(entry.medianWallS).padStart(6)} s   (${entry.wallS.map(f1).join(", ")})   machine CPU ${(entry.medianCpuBusy * 100).toFixed(0)}%`,
    );
  }
  console.log(`  1 -> 2 worker processes on this machine: ${summary.speedup2.toFixed(2)}x`);
  const c = summary.chunk;
  console.log("\nPer chunk (1-worker renders, mean over chunks), seconds:");
  console.log(
    `  setup (claim -> page ready) ${f1(c.setupS)}   catch-up ${f1(c.catchUpS)}   capture ${f1(c.captureS)}   drain ${f1(c.drainS)}   ` +
      `upload ${f1(c.uploadS)}   commit ${c.commitS.toFixed(2)}   => overhead ${f1(c.overheadS)}`,
  );
  console.log(
    `  capture per frame ${(c.capturePerFrameS * 1000).toFixed(0)} ms (whole render: ${(summary.whole.capturePerFrameS * 1000).toFixed(0)} ms)`,
  );
  console.log(
    `  whole render: overhead ${f1(summary.whole.overheadS)} s once; chunking cost per extra chunk ${f1(summary.chunkingCostPerExtraChunkS)} s`,
  );
  const j = summary.join;
  console.log(
    `  join: wait ${f1(j.waitS)}  download ${f1(j.downloadS)}  mux ${f1(j.muxS)}  upload ${f1(j.uploadS)}  total ${f1(j.totalS)}`,
  );
  console.log(`  startup (created -> first claim) ${f1(summary.startupS)} s`);
  const m = summary.model;
  console.log(
    `\nModel: wall(N) = startup + ceil(chunks/N) x (fixed ${f1(m.fixedS)} + catch-up (${f1(m.prerollS)} + ` +
      `${(m.catchUpPerEarlierFrameS * 1000).toFixed(1)} ms x start frame) + frames x capture/frame) + join ${f1(m.joinS)}`,
  );
  for (const p of summary.predictions) {
    console.log(
      `  ${String(p.workers).padStart(3)} workers, ${p.note.padEnd(36)} ${String(p.chunks).padStart(2)} chunks x ${p.framesPerChunk} frames, ${p.waves} wave(s): ${f1(p.wallS).padStart(6)} s`,
    );
  }
}

await main();
