// Cancel through the real service process (issue 29): a render cut into chunks, two workers each
// rendering one, is cancelled mid-render. The record ends failed with `cancelled` at once, every
// chunk job stops within seconds (each worker logs its abandon), nothing is charged, the webhook
// says `cancelled`, a second cancel answers the same record and a completed render answers 409.
// In the "scale-out" project this runs on PostgreSQL (pg-boss) and S3; in the default one on
// SQLite and the data dir.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookPayloadSchema } from "../shared/api";
import type { Receiver } from "./testing/https-receiver";
import {
  api,
  queryServiceDatabase,
  startServiceWithReceiver,
  uploadProject,
  waitForTerminalRender,
  type ServiceProcess,
} from "./testing/service-process";
import { buildZip, compositionHtml } from "./testing/zip-builder";
import { waitFor } from "../shared/testing/wait-for";

let svc: ServiceProcess;
let receiver: Receiver;

beforeAll(async () => {
  ({ svc, receiver } = await startServiceWithReceiver({
    jobs: 2,
    env: {
      SVC_SERVER_MAX_CHUNKS: "4",
      SVC_SERVER_CHUNK_SECONDS: "2",
      // Long enough that only the cancel check, not the heartbeat, can stop a chunk in time.
      SVC_SERVER_LEASE_SECONDS: "60",
    },
  }));
});

afterAll(async () => {
  await svc?.kill();
  await receiver?.close();
});

const creditsUsed = async (): Promise<number> =>
  (await api(svc, "GET", "/v3/users/me", { key: svc.apiKey })).body.data.billing.credits_used;

/** The service's log lines about one render, parsed. */
function logLines(renderId: string): Array<{ msg: string; chunk?: number; job?: string }> {
  return svc
    .logs()
    .split("\n")
    .filter((line) => line.includes(renderId))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as { msg: string; chunk?: number; job?: string }];
      } catch {
        return [];
      }
    });
}

describe("cancel", () => {
  it("stops every chunk of a render within seconds, charges nothing and tells the webhook", async () => {
    const before = await creditsUsed();
    const { assetId } = await uploadProject(
      svc,
      svc.apiKey,
      buildZip([{ name: "index.html", data: compositionHtml({ seconds: 60 }) }]),
    );
    const submitted = await api(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: {
        project: { type: "asset_id", asset_id: assetId },
        fps: 10,
        callback_url: `${receiver.url}/hook`,
        callback_id: "cancel-1",
      },
    });
    expect(submitted.status).toBe(201);
    const renderId: string = submitted.body.data.render_id;
    const rendering = await waitFor("two chunks to be rendering", async () => {
      const rows = await queryServiceDatabase<{ idx: number }>(
        svc.dataDir,
        "select idx from render_chunks where render_id = ? and state = 'rendering' and frames_done > 0",
        [renderId],
      );
      return rows.length >= 2 ? rows.map((row) => Number(row.idx)) : undefined;
    });

    const cancelledAt = Date.now();
    const cancel = await api(svc, "POST", `/v3/svc/renders/${renderId}/cancel`, {
      key: svc.apiKey,
    });
    expect(cancel.status).toBe(200);
    expect(cancel.body.data).toMatchObject({
      render_id: renderId,
      status: "failed",
      failure_code: "cancelled",
      credits_charged: 0,
      video_url: null,
    });

    // Every chunk job that was running stops, within the 10 s.
    const stopped = await waitFor(
      "every running chunk to be abandoned",
      async () => {
        const abandoned = new Set(
          logLines(renderId)
            .filter((line) => line.msg.startsWith("render abandoned"))
            .map((line) => line.chunk),
        );
        return rendering.every((chunk) => abandoned.has(chunk)) ? Date.now() : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    console.warn(`cancel: ${rendering.length} chunks stopped ${stopped - cancelledAt} ms after it`);
    const jobs = await queryServiceDatabase<{ id: string; state: string }>(
      svc.dataDir,
      "select id, state from jobs where id = ? or id like ?",
      [renderId, `${renderId}:%`],
    );
    expect(jobs.length).toBe(4);
    expect(jobs.filter((job) => job.state === "queued" || job.state === "active")).toEqual([]);
    // No chunk, and no join, ran after it.
    const started = logLines(renderId).filter((line) => /started$/.test(line.msg));
    expect(started.map((line) => line.chunk).sort()).toEqual([...rendering].sort());
    expect(logLines(renderId).some((line) => line.job === "join")).toBe(false);

    const record = (await api(svc, "GET", `/v3/svc/renders/${renderId}`, { key: svc.apiKey })).body
      .data;
    expect(record).toMatchObject({
      status: "failed",
      failure_code: "cancelled",
      credits_charged: 0,
    });
    expect(await creditsUsed()).toBe(before);

    const delivery = await waitFor("the webhook", async () =>
      receiver.deliveries.find((d) => d.body.includes('"cancel-1"') && d.status === 200),
    );
    expect(webhookPayloadSchema.parse(JSON.parse(delivery.body))).toMatchObject({
      event: "render.failed",
      status: "failed",
      render_id: renderId,
      failure_code: "cancelled",
    });

    // Idempotent: the same answer again, no second webhook queued.
    const again = await api(svc, "POST", `/v3/svc/renders/${renderId}/cancel`, {
      key: svc.apiKey,
    });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ status: "failed", failure_code: "cancelled" });
    const outbox = await queryServiceDatabase<{ n: number }>(
      svc.dataDir,
      "select count(*) as n from webhook_deliveries where render_id = ?",
      [renderId],
    );
    expect(Number(outbox[0]!.n)).toBe(1);
  });

  it("answers 409 for a render that completed, and 404 for one that is not the caller's", async () => {
    const { assetId } = await uploadProject(
      svc,
      svc.apiKey,
      buildZip([{ name: "index.html", data: compositionHtml({ seconds: 1 }) }]),
    );
    const submitted = await api(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: { project: { type: "asset_id", asset_id: assetId }, fps: 2 },
    });
    const renderId: string = submitted.body.data.render_id;
    expect(await waitForTerminalRender(svc, renderId)).toMatchObject({ status: "completed" });
    const cancel = await api(svc, "POST", `/v3/svc/renders/${renderId}/cancel`, {
      key: svc.apiKey,
    });
    expect(cancel.status).toBe(409);
    expect(cancel.body.error.code).toBe("svc_render_finished");
    expect(cancel.body.error.message).toContain("already completed");
    const missing = await api(svc, "POST", "/v3/svc/renders/rndr_nope/cancel", {
      key: svc.apiKey,
    });
    expect(missing.status).toBe(404);
  });
});
