// Webhooks: a durable outbox. Finishing a render inserts a delivery row in the same transaction,
// and the dispatcher (running in every service process, whether or not anyone polls) POSTs it,
// signed `Svc-Signature: t=<unix>,v1=<hex HMAC-SHA256("t.body", account webhook secret)>`, retrying
// with exponential backoff (base * 2^(attempt-1), capped) until a 2xx or the attempt limit.
// Targets pass the SSRF guard at submit and again at each delivery.
import { createHmac } from "node:crypto";
import type { Transaction } from "kysely";
import { WEBHOOK_SIGNATURE_HEADER, type WebhookPayload } from "../../shared/api";
import { backoffDelay } from "../../node/index";
import type { ServiceContext } from "../context";
import type { DB, RendersTable } from "../db/schema";
import { ApiError } from "../errors";
import { OutboundError, checkTarget, guardedRequest, type TargetPolicy } from "./outbound";
import { outputUrls, renderOutputs, toOutputRecord } from "../render/render-record";
import { loadOutput } from "../render/output-repository";
import { loadRender, submittingRequestId } from "../render/render-repository";
import { webhookSecret } from "../auth/account-repository";
import {
  claimDelivery,
  insertDelivery,
  loadDueDeliveries,
  markAttemptFailed,
  markDelivered,
} from "./delivery-repository";

const DELIVERY_TIMEOUT_MS = 10_000;

export function callbackPolicy(ctx: ServiceContext): TargetPolicy {
  return {
    allowPrivate: ctx.config.allowPrivateTargets,
    allowHttpLoopback: ctx.config.allowHttpLoopbackCallbacks,
  };
}

/** Refuses callback URLs that are not https (or allowed loopback http) or point inside the network. */
export async function checkCallbackUrl(ctx: ServiceContext, url: string): Promise<void> {
  try {
    await checkTarget(url, callbackPolicy(ctx));
  } catch (error) {
    if (error instanceof OutboundError) {
      throw new ApiError(
        "invalid_parameter",
        `callback_url refused: ${error.message}`,
        "callback_url",
      );
    }
    throw error;
  }
}

export async function enqueueWebhook(
  trx: Transaction<DB>,
  render: RendersTable,
  now: number,
): Promise<void> {
  const event = render.status === "completed" ? "render.completed" : "render.failed";
  await enqueueDelivery(trx, render, event, null, now);
}

/** `render.output.completed` for one output of a render submitted with `outputs`. */
export async function enqueueOutputWebhook(
  trx: Transaction<DB>,
  render: RendersTable,
  index: number,
  now: number,
): Promise<void> {
  await enqueueDelivery(trx, render, "render.output.completed", index, now);
}

/** A pending delivery of `event` to the render's callback URL (none without one). */
async function enqueueDelivery(
  trx: Transaction<DB>,
  render: RendersTable,
  event: string,
  outputIdx: number | null,
  now: number,
): Promise<void> {
  if (!render.callback_url) return;
  await insertDelivery(
    trx,
    { ...render, callback_url: render.callback_url },
    event,
    outputIdx,
    now,
  );
}

export function signWebhook(secret: string, timestamp: number, body: string): string {
  const v1 = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
  return `t=${timestamp},v1=${v1}`;
}

export function backoffMs(attempt: number, baseMs: number, capMs: number): number {
  return backoffDelay(attempt, { baseMs, capMs });
}

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly pollMs = 250,
  ) {}

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.deliverDue()
        .catch((error: unknown) => this.ctx.log.error({ err: error }, "webhook dispatch failed"))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.pollMs);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  async deliverDue(): Promise<void> {
    const { db, now } = this.ctx;
    const due = await loadDueDeliveries(db, now(), 10);
    await Promise.all(
      due.map(async (delivery) => {
        // Claim: push the next attempt past this one's timeout so no other dispatcher sends it too.
        if (!(await claimDelivery(db, delivery, now() + DELIVERY_TIMEOUT_MS * 2))) return;
        const attempt = delivery.attempts + 1;
        // The submitting request's id, so a log search for it finds the deliveries too.
        const requestId = await submittingRequestId(db, delivery.render_id);
        const log = this.ctx.log.child({
          ...(requestId ? { reqId: requestId } : {}),
          renderId: delivery.render_id,
          attempt,
        });
        const error = await this.send(delivery).catch((e: unknown) =>
          e instanceof Error ? e.message : String(e),
        );
        const { webhookBackoffBaseMs, webhookBackoffCapMs, webhookMaxAttempts } = this.ctx.config;
        if (error === undefined) {
          await markDelivered(db, delivery.id, attempt, now());
          this.ctx.metrics.webhookDeliveries.inc({ outcome: "delivered" });
          log.info("webhook delivered");
          return;
        }
        const failed = attempt >= webhookMaxAttempts;
        this.ctx.metrics.webhookDeliveries.inc({ outcome: failed ? "gave_up" : "failed" });
        log.warn({ failed }, `webhook delivery failed: ${error}`);
        await markAttemptFailed(db, delivery.id, {
          failed,
          attempts: attempt,
          error,
          nextAttemptMs: now() + backoffMs(attempt, webhookBackoffBaseMs, webhookBackoffCapMs),
        });
      }),
    );
  }

  /** Sends one delivery; resolves undefined on a 2xx, else a description of the failure. */
  private async send(delivery: {
    render_id: string;
    user_id: string;
    url: string;
    output_idx: number | null;
  }): Promise<string | undefined> {
    const { render_id: renderId, user_id: userId, url } = delivery;
    const { db } = this.ctx;
    const render = await loadRender(db, renderId);
    const secret = await webhookSecret(db, userId);
    if (!render || secret === undefined) return "render or account no longer exists";
    const urls = await outputUrls(this.ctx, render);
    const output =
      delivery.output_idx === null
        ? undefined
        : await toOutputRecord(
            this.ctx,
            render,
            await loadOutput(db, render.id, delivery.output_idx),
          );
    const payload: WebhookPayload = {
      event: output
        ? "render.output.completed"
        : render.status === "completed"
          ? "render.completed"
          : "render.failed",
      render_id: render.id,
      // An output's event is sent while its render may still be rendering; its status is the output's.
      status: output ? "completed" : render.status === "completed" ? "completed" : "failed",
      callback_id: render.callback_id,
      ...urls,
      duration: render.duration,
      failure_code: render.failure_code,
      failure_message: render.failure_message,
      created_at: Math.floor(render.created_ms / 1000),
      outputs: await renderOutputs(this.ctx, render, urls),
      ...(output ? { output } : {}),
    };
    const body = JSON.stringify(payload);
    const timestamp = Math.floor(this.ctx.now() / 1000);
    const response = await guardedRequest(url, callbackPolicy(this.ctx), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "svc-webhooks/1",
        [WEBHOOK_SIGNATURE_HEADER]: signWebhook(secret, timestamp, body),
      },
      body,
      timeoutMs: DELIVERY_TIMEOUT_MS,
      maxBytes: 64 * 1024,
    });
    if (response.status >= 200 && response.status < 300) return undefined;
    return `receiver answered HTTP ${response.status}`;
  }
}
