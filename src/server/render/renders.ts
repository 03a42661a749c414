// Render routes: submit (submit-render.ts), get, list (newest first, opaque keyset cursor), cancel
// and soft delete; their queries are in render-repository.ts.
// Cancel fails the render (failure_code `cancelled`), stops its jobs and queues its webhook in one
// transaction; a worker rendering it notices within a second (worker.ts) and stores nothing, and
// a render that never completes is never charged.
import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import {
  CANCELLED_FAILURE_CODE,
  type listRendersQuerySchema,
  type RenderList,
  type RenderRecord,
} from "../../shared/api";
import type { ServiceContext } from "../context";
import type { RendersTable } from "../db/schema";
import { ApiError } from "../errors";
import { routeOf } from "../http/operations";
import { principalOf } from "../http/request";
import type { ZodTypeProvider } from "../http/schema-compilers";
import { createIdempotently } from "../http/idempotency";
import type { JobQueue } from "../queue/job-queue";
import { enqueueWebhook } from "../webhooks/webhooks";
import { purgeOutputFiles } from "./render-outputs";
import { loadAccountRenders, markCancelled, markDeleted, selectRender } from "./render-repository";
import { toRenderRecord } from "./render-record";
import { submitRender } from "./submit-render";

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

function decodeCursor(token: string): { createdMs: number; id: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
    if (Array.isArray(value) && typeof value[0] === "number" && typeof value[1] === "string") {
      return { createdMs: value[0], id: value[1] };
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
  const after = token === undefined ? undefined : decodeCursor(token);
  const rows = await loadAccountRenders(ctx.db, userId, limit + 1, after);
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
    const updated = await markCancelled(trx, renderId, now);
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
    await markDeleted(trx, renderId, ctx.now());
    await queue.cancelRender(trx, renderId);
  });
  for (const key of [row.video_key, row.thumbnail_key]) {
    if (key) await ctx.store.delete(key);
  }
  await purgeOutputFiles(ctx, renderId);
}
