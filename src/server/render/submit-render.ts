// Submitting a render (POST /v3/svc/renders), in the order a request is checked: the account's
// credits and callback URL, the project (an uploaded asset, or a `url` project fetched and stored
// as one), the composition's variables and stills, then the renders row, its chunks or outputs
// and its jobs created in one transaction with the idempotency record (`beforeCommit`).
import type { Transaction } from "kysely";
import {
  RENDER_ID_PREFIX,
  type ParsedRenderRequest,
  type RenderWarning,
  type SubmitRenderResponse,
} from "../../shared/api";
import {
  blockingIssues,
  formatVariableIssue,
  validateVariables,
  type VariableIssue,
} from "../../shared/variables";
import { planOutputs, type PlannedOutput } from "../../shared/outputs";
import { frameCount } from "../../shared/frames";
import { planChunks, type Chunk } from "../../engine/contract";
import type { Principal } from "../auth/accounts";
import { creditsRemainingMilli, lockAccount } from "../auth/account-repository";
import { createAssetFromBytes, findAsset } from "../assets/assets";
import { checkCompositionPath, readComposition } from "../assets/project";
import { fetchUrlProject } from "../assets/url-project";
import type { ServiceContext } from "../context";
import type { AssetsTable, DB, RenderOutputsTable, RendersTable } from "../db/schema";
import { ApiError } from "../errors";
import { newId } from "../ids";
import type { JobQueue } from "../queue/job-queue";
import { checkCallbackUrl } from "../webhooks/webhooks";
import { enqueueRenderJobs } from "./admission";
import { readRenderCaptions } from "./captions";
import { insertChunks } from "./chunk-repository";
import { insertOutputs } from "./output-repository";
import { outputRows } from "./render-outputs";
import { insertRender, rendersInProgress } from "./render-repository";
import { liveWorkerSlots } from "./worker-presence-repository";

export async function submitRender(
  ctx: ServiceContext,
  queue: JobQueue,
  principal: Principal,
  input: ParsedRenderRequest,
  /** Runs inside the transaction that creates the render (the idempotency record). */
  beforeCommit?: (trx: Transaction<DB>, response: SubmitRenderResponse) => Promise<void>,
  /** The submitting HTTP request's id: on every log line of the render's jobs and webhooks. */
  requestId?: string,
): Promise<SubmitRenderResponse> {
  const composition = checkCompositionPath(input.composition);
  await checkCredits(ctx, principal.user.id);
  if (input.callback_url) await checkCallbackUrl(ctx, input.callback_url);
  const asset = await projectAsset(ctx, principal, input, composition);
  const facts = await readComposition(ctx, asset.storage_key, composition);
  const variableIssues = checkVariables(facts.variables, input);
  const captions = input.captions
    ? await readRenderCaptions(ctx, asset.storage_key, input.captions)
    : undefined;
  const planned = input.outputs ? planOutputs(input) : undefined;
  if (planned) checkStillTimes(planned, facts.duration);
  const detectedRatio = input.aspect_ratio ?? facts.aspectRatio ?? "16:9";

  const id = newId(RENDER_ID_PREFIX);
  const outputs = planned ? outputRows(id, planned, detectedRatio) : [];
  const row = renderRow(ctx, {
    id,
    userId: principal.user.id,
    input,
    composition,
    assetId: asset.id,
    detectedRatio,
    variableIssues,
    outputs,
    captionsJson: captions ? JSON.stringify(captions) : null,
    requestId,
  });
  // A render with several outputs renders each whole, side by side on as many workers.
  const chunks = planned ? undefined : await planRenderChunks(ctx, input.fps, facts.duration);
  if (chunks) {
    row.frames = chunks.frames;
    row.chunk_count = chunks.list.length;
  }
  const response: SubmitRenderResponse = { render_id: id, status: "queued" };
  await ctx.db.transaction().execute(async (trx) => {
    await createRender(ctx, trx, queue, row, chunks?.list, outputs);
    await beforeCommit?.(trx, response);
  });
  return response;
}

/** An account with no credits left cannot start a render (it would end uncharged). */
async function checkCredits(ctx: ServiceContext, userId: string): Promise<void> {
  if ((await creditsRemainingMilli(ctx.db, userId)) <= 0) {
    throw new ApiError(
      "svc_insufficient_credits",
      "the account has no credits left; add credits to render",
    );
  }
}

/** The uploaded asset the render reads, or a `url` project downloaded and stored as one. */
async function projectAsset(
  ctx: ServiceContext,
  principal: Principal,
  input: ParsedRenderRequest,
  composition: string,
): Promise<AssetsTable & { storage_key: string }> {
  const asset =
    input.project.type === "asset_id"
      ? await findAsset(ctx, principal.user.id, input.project.asset_id).catch((error: unknown) => {
          throw error instanceof ApiError
            ? new ApiError(error.code, error.message, "project.asset_id")
            : error;
        })
      : await createAssetFromBytes(
          ctx,
          principal,
          "url-project.zip",
          await fetchUrlProject(ctx, input.project.url, composition),
        );
  if (asset.status !== "ready" || !asset.storage_key) {
    throw new ApiError(
      "svc_upload_not_found",
      `asset ${asset.id} is not complete yet; finish its upload first`,
      "project.asset_id",
    );
  }
  return { ...asset, storage_key: asset.storage_key };
}

/**
 * A value of the wrong type, outside its enum or its range is refused always (a render of the
 * wrong thing would be charged); an undeclared key only with strict_variables (SPEC.md 4).
 * Returns the issues that did not stop the render (its warnings).
 */
function checkVariables(
  declared: Parameters<typeof validateVariables>[0],
  input: ParsedRenderRequest,
): VariableIssue[] {
  const variableIssues = validateVariables(declared, input.variables);
  const issues = blockingIssues(variableIssues, input.strict_variables);
  if (issues.length > 0) {
    throw new ApiError(
      "svc_project_invalid",
      `variables do not match the composition's schema: ${issues.map(formatVariableIssue).join("; ")}`,
      "variables",
    );
  }
  return variableIssues;
}

/** The renders row of a new render, queued; rendered whole until chunks are planned. */
function renderRow(
  ctx: ServiceContext,
  render: {
    id: string;
    userId: string;
    input: ParsedRenderRequest;
    composition: string;
    assetId: string;
    detectedRatio: NonNullable<ParsedRenderRequest["aspect_ratio"]>;
    variableIssues: VariableIssue[];
    outputs: RenderOutputsTable[];
    captionsJson: string | null;
    requestId: string | undefined;
  },
): RendersTable {
  const { input, outputs } = render;
  // With `outputs`, the record's own format, resolution and aspect ratio are outputs[0]'s.
  const first = outputs[0];
  return {
    id: render.id,
    user_id: render.userId,
    status: "queued",
    progress: 0,
    title: input.title ?? null,
    fps: input.fps,
    quality: input.quality,
    format: first?.format ?? input.format,
    resolution: first?.resolution ?? input.resolution,
    aspect_ratio: first?.aspect_ratio ?? render.detectedRatio,
    composition: render.composition,
    variables_json: JSON.stringify(input.variables),
    strict_variables: input.strict_variables ? 1 : 0,
    warnings_json: JSON.stringify(render.variableIssues.map(toRenderWarning)),
    project_json: JSON.stringify(input.project),
    asset_id: render.assetId,
    duration: null,
    credits_charged_milli: 0,
    created_ms: ctx.now(),
    started_ms: null,
    completed_ms: null,
    video_key: null,
    thumbnail_key: null,
    failure_code: null,
    failure_message: null,
    callback_url: input.callback_url ?? null,
    callback_id: input.callback_id ?? null,
    deleted_ms: null,
    frames: null,
    request_id: render.requestId ?? null,
    held: 0,
    chunk_count: 1,
    chunks_done: 0,
    audio_json: null,
    output_count: outputs.length,
    outputs_done: 0,
    captions_json: render.captionsJson,
  };
}

/**
 * Stores the render with its chunks or outputs and queues its jobs, in the submit's transaction;
 * over the account's cap on renders in progress, it waits held instead (admission.ts).
 */
async function createRender(
  ctx: ServiceContext,
  trx: Transaction<DB>,
  queue: JobQueue,
  row: RendersTable,
  chunks: Chunk[] | undefined,
  outputs: RenderOutputsTable[],
): Promise<void> {
  const cap = ctx.config.maxRendersPerAccount;
  if (cap > 0) {
    await lockAccount(trx, row.user_id, Boolean(ctx.config.databaseUrl));
    if ((await rendersInProgress(trx, row.user_id)) >= cap) row.held = 1;
  }
  await insertRender(trx, row);
  if (chunks) await insertChunks(trx, row.id, chunks);
  await insertOutputs(trx, outputs);
  if (!row.held) {
    const indexes = chunks ? chunks.map((chunk) => chunk.index) : [];
    await enqueueRenderJobs(trx, queue, row.id, indexes, outputs.length);
  }
}

/**
 * The chunks of a distributed render, or undefined to render it whole: when chunking is off
 * (SVC_SERVER_MAX_CHUNKS=1, the embedded default), when the composition does not declare its
 * duration (the frame count is then known only once a page has loaded), or when it is short.
 * Sized by the workers alive now (about two chunks each, SVC_SERVER_CHUNKS_PER_WORKER), unless
 * SVC_SERVER_CHUNK_SECONDS fixes the length or no worker has announced itself yet.
 */
async function planRenderChunks(
  ctx: ServiceContext,
  fps: number,
  duration: number | undefined,
): Promise<{ frames: number; list: Chunk[] } | undefined> {
  if (ctx.config.maxChunks <= 1 || duration === undefined) return undefined;
  const frames = frameCount(duration, fps);
  if (frames < 1) return undefined;
  const liveWorkers =
    ctx.config.chunkSizing === "workers" ? await liveWorkerSlots(ctx.db, ctx.now()) : 0;
  const list = planChunks(frames, fps, { ...ctx.config, liveWorkers });
  return list.length > 1 ? { frames, list } : undefined;
}

/** A still past the composition's declared end is refused before anything is queued. */
function checkStillTimes(planned: PlannedOutput[], duration: number | undefined): void {
  if (duration === undefined) return;
  for (const output of planned) {
    if (output.time !== null && output.time >= duration) {
      throw new ApiError(
        "invalid_parameter",
        `outputs[${output.index}].still.time: the composition lasts ${duration} s; give a time from 0 to less than ${duration}`,
        `outputs[${output.index}].still.time`,
      );
    }
  }
}

/** A variable issue that did not stop the render (only undeclared keys reach here). */
function toRenderWarning(issue: VariableIssue): RenderWarning {
  return {
    code: "undeclared_variable",
    message: `${issue.id} is not declared by the composition; it is passed to the page as given`,
    param: `variables.${issue.id}`,
  };
}
