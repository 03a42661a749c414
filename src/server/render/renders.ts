// Render routes: submit (validate options, project and variables, then queue in one
// transaction), get, list (newest first, opaque keyset cursor), cancel and soft delete.
// Cancel fails the render (failure_code `cancelled`), stops its jobs and queues its webhook in one
// transaction; a worker rendering it notices within a second (worker.ts) and stores nothing, and
// a render that never completes is never charged.
import { readRenderCaptions } from "./captions";
import type { FastifyInstance } from "fastify";
import type { Transaction } from "kysely";
import type { z } from "zod";
import type { listRendersQuerySchema } from "../../shared/api";
import {
  CANCELLED_FAILURE_CODE,
  RENDER_ID_PREFIX,
  type ParsedRenderRequest,
  type RenderList,
  type RenderRecord,
  type RenderWarning,
  type SubmitRenderResponse,
} from "../../shared/api";
import {
  blockingIssues,
  formatVariableIssue,
  validateVariables,
  type VariableIssue,
} from "../../shared/variables";
import type { Principal } from "../auth/accounts";
import { createAssetFromBytes, findAsset } from "../assets/assets";
import type { ServiceContext } from "../context";
import { compiledOnce } from "../db/database";
import type { DB, RendersTable } from "../db/schema";
import { ApiError } from "../errors";
import { routeOf } from "../http/operations";
import { principalOf } from "../http/request";
import type { ZodTypeProvider } from "../http/schema-compilers";
import { newId } from "../ids";
import { createIdempotently } from "../http/idempotency";
import { checkCompositionPath, readComposition } from "../assets/project";
import { planChunks, type Chunk } from "../../engine/contract";
import { liveWorkerSlots } from "./worker-presence";
import { enqueueRenderJobs, lockAccount, rendersInProgress } from "./admission";
import type { JobQueue } from "../queue/job-queue";
import { toRenderRecord } from "./render-record";
import { fetchUrlProject } from "../assets/url-project";
import { checkCallbackUrl, enqueueWebhook } from "../webhooks/webhooks";
import { planOutputs, type PlannedOutput } from "../../shared/outputs";
import { outputRows, purgeOutputFiles } from "./render-outputs";
import { frameCount } from "../../shared/frames";

export const RENDER_ENDPOINT = "POST /v3/svc/renders";

export function registerRenderRoutes(
  instance: FastifyInstance,
  ctx: ServiceContext,
  queue: JobQueue,
): void {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  app.route({
    ...routeOf("submitRender"),
    handler: (request, reply) =>
      createIdempotently(ctx.db, request, reply, RENDER_ENDPOINT, async (principal, record) => {
        const data = await submitRender(ctx, queue, principal, request.body, record, request.id);
        request.log.info({ renderId: data.render_id }, "render submitted");
        return data;
      }),
  });

  app.route({
    ...routeOf("getRender"),
    handler: (request) => renderAnswer(ctx, principalOf(request).user.id, request.params.id),
  });

  app.route({
    ...routeOf("listRenders"),
    handler: async (request) => listRenders(ctx, principalOf(request).user.id, request.query),
  });

  app.route({
    ...routeOf("cancelRender"),
    handler: async (request) => {
      const row = await cancelRender(ctx, queue, principalOf(request).user.id, request.params.id);
      return { data: await toRenderRecord(ctx, row) };
    },
  });

  app.route({
    ...routeOf("deleteRender"),
    handler: async (request) => {
      await deleteRender(ctx, queue, principalOf(request).user.id, request.params.id);
      return { data: { render_id: request.params.id } };
    },
  });
}

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
  const user = await ctx.db
    .selectFrom("users")
    .select("credits_remaining_milli")
    .where("id", "=", principal.user.id)
    .executeTakeFirstOrThrow();
  if (user.credits_remaining_milli <= 0) {
    throw new ApiError(
      "svc_insufficient_credits",
      "the account has no credits left; add credits to render",
    );
  }
  if (input.callback_url) await checkCallbackUrl(ctx, input.callback_url);

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
  const facts = await readComposition(ctx, asset.storage_key, composition);
  // A value of the wrong type, outside its enum or its range is refused always (a render of the
  // wrong thing would be charged); an undeclared key only with strict_variables (SPEC.md 4).
  const variableIssues = validateVariables(facts.variables, input.variables);
  const issues = blockingIssues(variableIssues, input.strict_variables);
  if (issues.length > 0) {
    throw new ApiError(
      "svc_project_invalid",
      `variables do not match the composition's schema: ${issues.map(formatVariableIssue).join("; ")}`,
      "variables",
    );
  }

  const captions = input.captions
    ? await readRenderCaptions(ctx, asset.storage_key, input.captions)
    : undefined;

  const planned = input.outputs ? planOutputs(input) : undefined;
  if (planned) checkStillTimes(planned, facts.duration);
  const detectedRatio = input.aspect_ratio ?? facts.aspectRatio ?? "16:9";

  const id = newId(RENDER_ID_PREFIX);
  const outputs = planned ? outputRows(id, planned, detectedRatio) : [];
  // With `outputs`, the record's own format, resolution and aspect ratio are outputs[0]'s.
  const first = outputs[0];
  const row: RendersTable = {
    id,
    user_id: principal.user.id,
    status: "queued",
    progress: 0,
    title: input.title ?? null,
    fps: input.fps,
    quality: input.quality,
    format: first?.format ?? input.format,
    resolution: first?.resolution ?? input.resolution,
    aspect_ratio: first?.aspect_ratio ?? detectedRatio,
    composition,
    variables_json: JSON.stringify(input.variables),
    strict_variables: input.strict_variables ? 1 : 0,
    warnings_json: JSON.stringify(variableIssues.map(toRenderWarning)),
    project_json: JSON.stringify(input.project),
    asset_id: asset.id,
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
    request_id: requestId ?? null,
    held: 0,
    chunk_count: 1,
    chunks_done: 0,
    audio_json: null,
    output_count: outputs.length,
    outputs_done: 0,
    captions_json: captions ? JSON.stringify(captions) : null,
  };
  // A render with several outputs renders each whole, side by side on as many workers.
  const chunks = planned ? undefined : await planRenderChunks(ctx, input.fps, facts.duration);
  if (chunks) {
    row.frames = chunks.frames;
    row.chunk_count = chunks.list.length;
  }
  const response: SubmitRenderResponse = { render_id: id, status: "queued" };
  await ctx.db.transaction().execute(async (trx) => {
    // Over the account's cap on renders in progress, the render waits held (admission.ts).
    const cap = ctx.config.maxRendersPerAccount;
    if (cap > 0) {
      await lockAccount(ctx, trx, principal.user.id);
      if ((await rendersInProgress(trx, principal.user.id)) >= cap) row.held = 1;
    }
    await trx.insertInto("renders").values(row).execute();
    if (chunks) {
      await trx
        .insertInto("render_chunks")
        .values(
          chunks.list.map((chunk) => ({
            render_id: id,
            idx: chunk.index,
            first_segment: chunk.firstSegment,
            segment_count: chunk.segmentCount,
            first_frame: chunk.firstFrame,
            frame_count: chunk.frameCount,
            state: "queued" as const,
            frames_done: 0,
            attempts: 0,
            worker: null,
            segments_json: null,
            started_ms: null,
            completed_ms: null,
          })),
        )
        .execute();
    }
    if (outputs.length > 0) await trx.insertInto("render_outputs").values(outputs).execute();
    if (!row.held) {
      const indexes = chunks ? chunks.list.map((chunk) => chunk.index) : [];
      await enqueueRenderJobs(trx, queue, id, indexes, outputs.length);
    }
    await beforeCommit?.(trx, response);
  });
  return response;
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

/** A user's render that is not deleted: the hottest read of the service (every poll). */
export const selectRender = compiledOnce((db, renderId: string, userId: string) =>
  db
    .selectFrom("renders")
    .selectAll()
    .where("id", "=", renderId)
    .where("user_id", "=", userId)
    .where("deleted_ms", "is", null),
);

/** The polled answer, as this route gives it (the poll lane's: poll-answers.ts). */
export async function renderAnswer(
  ctx: ServiceContext,
  userId: string,
  renderId: string,
): Promise<{ data: RenderRecord }> {
  return { data: await toRenderRecord(ctx, await findRender(ctx, userId, renderId)) };
}

export async function findRender(
  ctx: ServiceContext,
  userId: string,
  renderId: string,
): Promise<RendersTable> {
  const [row] = await selectRender(ctx.db, renderId, userId);
  if (!row) throw renderNotFound(renderId);
  return row;
}

export function renderNotFound(renderId: string): ApiError {
  return new ApiError("svc_render_not_found", `no render ${renderId}`, "render_id");
}

function encodeCursor(row: RendersTable): string {
  return Buffer.from(JSON.stringify([row.created_ms, row.id])).toString("base64url");
}

function decodeCursor(token: string): [number, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    if (Array.isArray(value) && typeof value[0] === "number" && typeof value[1] === "string") {
      return [value[0], value[1]];
    }
  } catch {
    // fall through
  }
  throw new ApiError("invalid_parameter", "token is not a page token from this API", "token");
}

export async function listRenders(
  ctx: ServiceContext,
  userId: string,
  { limit, token }: z.output<typeof listRendersQuerySchema>,
): Promise<RenderList> {
  let select = ctx.db
    .selectFrom("renders")
    .selectAll()
    .where("user_id", "=", userId)
    .where("deleted_ms", "is", null);
  if (token !== undefined) {
    const [createdMs, id] = decodeCursor(token);
    select = select.where((eb) =>
      eb.or([
        eb("created_ms", "<", createdMs),
        eb.and([eb("created_ms", "=", createdMs), eb("id", "<", id)]),
      ]),
    );
  }
  const rows = await select
    .orderBy("created_ms", "desc")
    .orderBy("id", "desc")
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return {
    data: await Promise.all(page.map((row) => toRenderRecord(ctx, row))),
    has_more: hasMore,
    next_token: hasMore ? encodeCursor(page[page.length - 1]!) : null,
  };
}

/**
 * Stops a queued or rendering render: failed with `cancelled`, its jobs stopped, its webhook
 * queued, all in one transaction (so a worker finishing at the same moment either completes it
 * first — then this answers 409 — or finds its lease gone and charges nothing). Cancelling a
 * cancelled render answers it again.
 */
export async function cancelRender(
  ctx: ServiceContext,
  queue: JobQueue,
  userId: string,
  renderId: string,
): Promise<RendersTable> {
  await findRender(ctx, userId, renderId);
  const cancelled = await ctx.db.transaction().execute(async (trx) => {
    const now = ctx.now();
    const updated = await trx
      .updateTable("renders")
      .set({
        status: "failed",
        failure_code: CANCELLED_FAILURE_CODE,
        failure_message: "the render was cancelled; nothing was charged",
        completed_ms: now,
      })
      .where("id", "=", renderId)
      .where("status", "in", ["queued", "rendering"])
      .where("deleted_ms", "is", null)
      .returningAll()
      .executeTakeFirst();
    if (!updated) return undefined;
    await queue.cancelRender(trx, renderId);
    await enqueueWebhook(trx, updated, now);
    return updated;
  });
  if (cancelled) {
    await purgeOutputFiles(ctx, renderId);
    return cancelled;
  }
  const row = await findRender(ctx, userId, renderId);
  if (row.status === "failed" && row.failure_code === CANCELLED_FAILURE_CODE) return row;
  throw new ApiError(
    "svc_render_finished",
    row.status === "completed"
      ? `render ${renderId} already completed and was charged; it can no longer be cancelled`
      : `render ${renderId} already failed (${row.failure_code ?? "unknown"}); there is nothing to cancel`,
    "render_id",
  );
}

/** Soft delete: hide the record, stop its job, purge its files. */
export async function deleteRender(
  ctx: ServiceContext,
  queue: JobQueue,
  userId: string,
  renderId: string,
): Promise<void> {
  const row = await findRender(ctx, userId, renderId);
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .updateTable("renders")
      .set({ deleted_ms: ctx.now() })
      .where("id", "=", renderId)
      .execute();
    await queue.cancelRender(trx, renderId);
  });
  for (const key of [row.video_key, row.thumbnail_key]) {
    if (key) await ctx.store.delete(key);
  }
  await purgeOutputFiles(ctx, renderId);
}
