// One job being worked on (an attempt): its render, lease, work dir, the objects it stored so far
// and when its phases began. Shared by the kinds of job (job-whole.ts, job-chunk.ts,
// job-join.ts, job-output.ts): the project unzipped from the object store, the engine's options from the render
// row, and outputs stored under the render's prefix.
import type { RenderCaptions } from "../../engine/contract";
import { createReadStream } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { AudioInput } from "../../engine/index";
import type { ChunkResult, JoinChunksOptions, RenderChunkOptions } from "../../engine/index";
import type { RenderCompositionOptions, RenderProgress, RenderResult } from "../../engine/contract";
import type { OutputResult, RenderOutputOptions } from "../../engine/index";
import type { AspectRatio, OutputFormat, Quality, Resolution } from "../../shared/render-options";
import { extractZip } from "../assets/zip-inspect";
import type { ServiceContext } from "../context";
import type { RendersTable } from "../db/schema";
import type { JobQueue, Lease, RenderJob } from "../queue/job-queue";
import type { ProjectCache } from "./project-cache";
import { assetStorageKey } from "../assets/asset-repository";

/** What a worker needs of the engine; injectable so API-only processes never load it. */
export interface Engine {
  renderComposition(options: RenderCompositionOptions): Promise<RenderResult>;
  renderChunk(options: RenderChunkOptions): Promise<ChunkResult>;
  joinChunks(options: JoinChunksOptions): Promise<{ warnings: string[] }>;
  /** One output of a render with `outputs`, a video or a still (job-output.ts). */
  renderOutput(options: RenderOutputOptions): Promise<OutputResult>;
  /** Closes the pages chunks left open for the next chunk, and the spare browser (shutdown). */
  closeWarmPages(): Promise<void>;
  /** Finds the tools, builds the page runtime and starts a spare browser, before any job. */
  warmUp(options?: { allowNetwork?: boolean }): Promise<void>;
}

/** What every job runs against. */
export interface JobServices {
  ctx: ServiceContext;
  queue: JobQueue;
  engine: Engine;
  projects: ProjectCache;
}

/**
 * Moments of a job logged with its end (ms after the claim): where a chunk's time goes. Between
 * "capturing" and "firstFrame" a chunk brings the page to its first frame (catch-up).
 */
export type Phase = "capturing" | "firstFrame" | "finishing" | "downloaded" | "rendered" | "stored";

export interface Attempt {
  lease: Lease;
  job: RenderJob;
  render: RendersTable;
  workDir: string;
  signal: AbortSignal;
  /** Objects stored by this attempt; removed if it does not finish. */
  stored: string[];
  log: ServiceContext["log"];
  claimedMs: number;
  phasesMs: Partial<Record<Phase, number>>;
  /** More for the job's "finished" log line (a chunk: how its page reached the first frame). */
  details: Record<string, unknown>;
  /** Frames the engine reported done so far (for the seconds-per-frame metric). */
  framesDone?: number;
  /** Run when the job ends, whatever happens (the cached project let go). */
  cleanups: (() => void)[];
}

/**
 * What a job returns: "finished" (its work is recorded and its lease finished), "dropped" (the
 * lease was lost or the render ended meanwhile: what it stored is referenced nowhere), or
 * "superseded" (the other copy of a chunk finished it first: the job is over, its files unused).
 * The worker's failure policy (failure-policy.ts) decides what follows.
 */
export type JobResult = "finished" | "dropped" | "superseded";

/** A job whose lease finished (queue.finish answered true) or was lost meanwhile. */
export function finishedIf(finished: boolean): JobResult {
  return finished ? "finished" : "dropped";
}

/** Progress is written at most twice a second. */
const PROGRESS_INTERVAL_MS = 500;

export function mark(attempt: Attempt, phase: Phase): void {
  attempt.phasesMs[phase] ??= Date.now() - attempt.claimedMs;
}

/** The engine's progress is reported at most every 100 ms: "firstFrame" is that close. */
function markProgress(attempt: Attempt, progress: RenderProgress): void {
  if (progress.stage === "preparing") return;
  attempt.framesDone = progress.framesDone;
  mark(attempt, progress.stage);
  if (progress.framesDone > 0) mark(attempt, "firstFrame");
}

/**
 * A job's `onProgress` for the engine: every report marks the attempt's phases, and at most one
 * every PROGRESS_INTERVAL_MS (with frames to count) reaches `write`, the job's database update.
 */
export function attemptProgress(
  attempt: Attempt,
  write: (progress: RenderProgress) => void,
): (progress: RenderProgress) => void {
  let last = 0;
  return (progress) => {
    markProgress(attempt, progress);
    const now = Date.now();
    if (now - last < PROGRESS_INTERVAL_MS || progress.framesTotal <= 0) return;
    last = now;
    write(progress);
  };
}

/**
 * The render's project, unzipped safely: from this worker's cache of projects when an earlier job
 * of the same asset left it there, else downloaded and unzipped into the cache.
 */
export async function unpackProject(services: JobServices, attempt: Attempt): Promise<string> {
  const { ctx } = services;
  const assetId = attempt.render.asset_id;
  const project = await services.projects.acquire(assetId, async (dir) => {
    const storageKey = await assetStorageKey(ctx.db, assetId);
    if (!storageKey) throw new Error(`the project asset ${assetId} is missing`);
    const local = await ctx.store.toLocalFile(storageKey);
    try {
      await extractZip(local.path, dir);
    } finally {
      await local.release();
    }
  });
  attempt.cleanups.push(() => void project.release());
  attempt.details.projectCached = project.hit;
  return project.dir;
}

/** The engine's options for this render (page network off unless configured, one page). */
export function renderOptions(services: JobServices, attempt: Attempt, projectDir: string) {
  const { render } = attempt;
  return {
    projectDir,
    composition: render.composition,
    fps: render.fps,
    quality: render.quality as Quality,
    format: render.format as OutputFormat,
    resolution: render.resolution as Resolution,
    aspectRatio: render.aspect_ratio as AspectRatio,
    variables: JSON.parse(render.variables_json) as Record<string, unknown>,
    strictVariables: render.strict_variables === 1,
    ...(render.captions_json
      ? { captions: JSON.parse(render.captions_json) as RenderCaptions }
      : {}),
    workers: 1,
    allowNetwork: services.ctx.config.allowPageNetwork,
    signal: attempt.signal,
  } satisfies Partial<RenderCompositionOptions>;
}

/** Stores a file as `key`; the attempt removes it again if it does not finish. */
export async function storeFile(
  services: JobServices,
  attempt: Attempt,
  key: string,
  file: string,
): Promise<string> {
  await services.ctx.store.put(key, createReadStream(file));
  attempt.stored.push(key);
  return key;
}

/** Where this render's objects live in the store. */
export function renderPrefix(attempt: Attempt): string {
  return `renders/${attempt.render.user_id}/${attempt.render.id}`;
}

/** An audio source inside the project, written relative to it (other workers unzip elsewhere). */
export function toProjectRelative(input: AudioInput, projectDir: string): AudioInput {
  if (!isAbsolute(input.source)) return input;
  return { ...input, source: relative(projectDir, input.source) };
}

/** The recorded source inside this worker's copy of the project; undefined if it would escape. */
export function fromProjectRelative(input: AudioInput, projectDir: string): string | undefined {
  if (/^https?:\/\//.test(input.source)) return input.source;
  const root = resolve(projectDir);
  const source = resolve(root, input.source);
  return source.startsWith(root + sep) ? source : undefined;
}
