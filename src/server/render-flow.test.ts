// Real renders through the real service process: upload, submit, poll, download through signed
// URLs (ffprobe checks the video), signed webhooks to a local HTTPS receiver, and `url` projects.
import { createHmac } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeMedia } from "../engine/testing/probe";
import { renderRecordSchema, webhookPayloadSchema } from "../shared/api";
import type { Receiver } from "./testing/https-receiver";
import {
  api,
  startServiceWithReceiver,
  uploadProject,
  waitForTerminalRender,
  type ServiceProcess,
  queryServiceDatabase,
} from "./testing/service-process";
import { buildZip, compositionHtml } from "./testing/zip-builder";
import { waitFor } from "../shared/testing/wait-for";

let svc: ServiceProcess;
let receiver: Receiver;
let dir: string;

beforeAll(async () => {
  ({ svc, receiver, dir } = await startServiceWithReceiver({
    jobs: 1,
    env: {
      SVC_SERVER_DOWNLOAD_URL_TTL_SECONDS: "3",
      SVC_SERVER_LEASE_SECONDS: "3",
    },
  }));
});

afterAll(async () => {
  await svc?.kill();
  await receiver?.close();
});

const pollUntilTerminal = (renderId: string, timeoutMs?: number) =>
  waitForTerminalRender(svc, renderId, timeoutMs);
/** The record with URLs signed now: they live 3 s here, which a loaded machine can outlast. */
const freshUrls = async (renderId: string): Promise<{ video_url: string; thumbnail_url: string }> =>
  (await api(svc, "GET", `/v3/svc/renders/${renderId}`, { key: svc.apiKey })).body.data;

function verifySignature(header: string, body: string, secret: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  return createHmac("sha256", secret).update(`${match[1]}.${body}`).digest("hex") === match[2];
}

describe("render flow", () => {
  it("uploads, renders, and serves the video and thumbnail through signed URLs; tampered or expired URLs get 403", async () => {
    const zip = buildZip([
      { name: "index.html", data: compositionHtml({ seconds: 1 }), deflate: true },
    ]);
    const { assetId, complete } = await uploadProject(svc, svc.apiKey, zip);
    expect(complete.status).toBe(200);
    const submitted = await api(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: {
        project: { type: "asset_id", asset_id: assetId },
        fps: 5,
        quality: "draft",
        title: "flow",
        callback_url: `${receiver.url}/hook`,
        callback_id: "flow-1",
      },
    });
    expect(submitted.status).toBe(201);
    const renderId: string = submitted.body.data.render_id;
    const record = await pollUntilTerminal(renderId);
    renderRecordSchema.strict().parse(record);
    expect(record).toMatchObject({
      status: "completed",
      progress: 1,
      duration: 1,
      credits_charged: 1,
      title: "flow",
      failure_code: null,
    });
    expect(record.started_at).toBeGreaterThan(0);
    expect(record.completed_at).toBeGreaterThanOrEqual(record.started_at);

    const video = await fetch(record.video_url);
    // A file the service stores and serves itself is never sniffed into something the browser
    // would run. (An S3 store's presigned URL is the store's answer, not the service's.)
    if (!new URL(record.video_url!).searchParams.has("X-Amz-Signature")) {
      expect(video.headers.get("x-content-type-options")).toBe("nosniff");
    }
    expect(video.status).toBe(200);
    expect(video.headers.get("content-type")).toBe("video/mp4");
    const videoFile = join(dir, "downloaded.mp4");
    const bytes = Buffer.from(await video.arrayBuffer());
    await writeFile(videoFile, bytes);
    const info = await probeMedia(videoFile);
    expect(info.format).toContain("mp4");
    const stream = info.streams.find((s) => s.type === "video");
    expect(stream).toMatchObject({ codec: "h264", width: 1920, height: 1080 });
    expect(info.durationSeconds).toBeGreaterThan(0.5);

    const thumbnail = await fetch((await freshUrls(renderId)).thumbnail_url);
    expect(thumbnail.status).toBe(200);
    expect(Buffer.from(await thumbnail.arrayBuffer()).subarray(0, 3)).toEqual(
      Buffer.from([0xff, 0xd8, 0xff]),
    );

    const partial = await fetch((await freshUrls(renderId)).video_url, {
      headers: { range: "bytes=0-99" },
    });
    expect(partial.status).toBe(206);
    expect(partial.headers.get("content-range")).toBe(`bytes 0-99/${bytes.length}`);
    expect(Buffer.from(await partial.arrayBuffer())).toEqual(bytes.subarray(0, 100));

    // Signed by the service (data dir: sig/exp) or presigned by the object store (S3: SigV4);
    // either way the one who checks it refuses a changed signature or a longer life.
    const signed = (await freshUrls(renderId)).video_url;
    const s3 = new URL(signed).searchParams.has("X-Amz-Signature");
    const [sigParam, lifeParam] = s3 ? ["X-Amz-Signature", "X-Amz-Expires"] : ["sig", "exp"];
    const tampered = new URL(signed);
    const sig = tampered.searchParams.get(sigParam)!;
    tampered.searchParams.set(sigParam, (sig[0] === "a" ? "b" : "a") + sig.slice(1));
    const refused = await fetch(tampered);
    expect(refused.status).toBe(403);
    if (!s3) {
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    }
    const longer = new URL(signed);
    longer.searchParams.set(lifeParam, String(Number(longer.searchParams.get(lifeParam)) + 3600));
    expect((await fetch(longer)).status).toBe(403);

    const me = await api(svc, "GET", "/v3/users/me", { key: svc.apiKey });
    expect(me.body.data.billing.credits_used).toBe(1);

    const delivery = await waitFor("the webhook", async () =>
      receiver.deliveries.find((d) => d.body.includes('"flow-1"')),
    );
    const payload = webhookPayloadSchema.strict().parse(JSON.parse(delivery.body));
    expect(payload).toMatchObject({
      event: "render.completed",
      render_id: renderId,
      status: "completed",
      callback_id: "flow-1",
      duration: 1,
      failure_message: null,
    });
    expect(payload.video_url?.startsWith(svc.storageUrl)).toBe(true);
    expect(
      verifySignature(String(delivery.headers["svc-signature"]), delivery.body, svc.webhookSecret),
    ).toBe(true);
    expect(
      verifySignature(String(delivery.headers["svc-signature"]), delivery.body, "whsec_wrong"),
    ).toBe(false);
    expect(receiver.deliveries.filter((d) => d.body.includes('"flow-1"'))).toHaveLength(1);

    // Deleting the render purges its files: a URL signed before the delete finds nothing.
    const fresh = (await api(svc, "GET", `/v3/svc/renders/${renderId}`, { key: svc.apiKey })).body
      .data;
    expect(
      (await api(svc, "DELETE", `/v3/svc/renders/${renderId}`, { key: svc.apiKey })).status,
    ).toBe(200);
    const purged = await fetch(fresh.video_url);
    expect(purged.status).toBe(404);
    expect((await fetch(fresh.thumbnail_url)).status).toBe(404);

    // The signed URL was made with a 3 s lifetime for this service: it must stop working.
    const expired = await waitFor(
      "the video URL to expire",
      async () => {
        const response = await fetch(record.video_url);
        await response.arrayBuffer();
        return response.status === 403 ? response : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 250 },
    );
    expect(expired.status).toBe(403);
  });

  it("fails a render the engine refuses, charges nothing, and retries its webhook until the receiver takes it", async () => {
    // 1000x700 matches no aspect ratio, so the engine refuses it before capturing anything.
    const html = compositionHtml().replace(
      'data-width="1920" data-height="1080"',
      'data-width="1000" data-height="700"',
    );
    const { assetId } = await uploadProject(
      svc,
      svc.apiKey,
      buildZip([{ name: "index.html", data: html }]),
    );
    receiver.failFirst.set("flaky-1", 2);
    const submitted = await api(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: {
        project: { type: "asset_id", asset_id: assetId },
        fps: 5,
        callback_url: `${receiver.url}/hook`,
        callback_id: "flaky-1",
      },
    });
    const record = await pollUntilTerminal(submitted.body.data.render_id);
    expect(record).toMatchObject({
      status: "failed",
      failure_code: "aspect_mismatch",
      credits_charged: 0,
      video_url: null,
    });
    expect(record.failure_message).toContain("1000x700");
    const attempts = await waitFor("three webhook attempts", async () => {
      const mine = receiver.deliveries.filter((d) => d.body.includes('"flaky-1"'));
      return mine.length >= 3 ? mine : undefined;
    });
    expect(attempts.map((d) => d.status)).toEqual([500, 500, 200]);
    const row = await waitFor("the outbox row to be marked delivered", async () => {
      const [found] = await queryServiceDatabase<{ state: string; attempts: number }>(
        svc.dataDir,
        "select state, attempts from webhook_deliveries where render_id = ?",
        [submitted.body.data.render_id],
      );
      return found?.state === "delivered" ? found : undefined;
    });
    expect(row).toEqual({ state: "delivered", attempts: 3 });
    for (const attempt of attempts) {
      expect(JSON.parse(attempt.body)).toMatchObject({
        event: "render.failed",
        status: "failed",
        callback_id: "flaky-1",
      });
      expect(
        verifySignature(String(attempt.headers["svc-signature"]), attempt.body, svc.webhookSecret),
      ).toBe(true);
    }
  });

  it("renders a url project fetched by the service, and checks its variables at submit", async () => {
    const variables = [{ id: "title", type: "string", label: "Title", default: "Hi" }];
    const page = compositionHtml({ seconds: 1, variables });
    const origin: Server = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" }).end(page);
    });
    await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/index.html`;
      const strict = await api(svc, "POST", "/v3/svc/renders", {
        key: svc.apiKey,
        body: { project: { type: "url", url }, variables: { title: 42 }, strict_variables: true },
      });
      expect(strict.status).toBe(422);
      expect(strict.body.error.code).toBe("svc_project_invalid");
      const submitted = await api(svc, "POST", "/v3/svc/renders", {
        key: svc.apiKey,
        body: {
          project: { type: "url", url },
          fps: 5,
          quality: "draft",
          variables: { title: "Hello" },
          strict_variables: true,
        },
      });
      expect(submitted.status).toBe(201);
      const record = await pollUntilTerminal(submitted.body.data.render_id);
      expect(record).toMatchObject({ status: "completed", duration: 1 });
    } finally {
      await new Promise<void>((resolve) => origin.close(() => resolve()));
    }
  });

  it("records the CDN libraries a render used, with the version each tag was pinned to", async () => {
    // The service answers the page's CDN URL from the npm registry (its library cache); the page
    // itself reaches no network.
    const page = compositionHtml({ seconds: 1 }).replace(
      "</body>",
      `<script src="https://cdn.jsdelivr.net/npm/animejs@3/lib/anime.min.js"></script>
<script>anime({ targets: "#box", opacity: [1, 0.5], duration: 1000, easing: "linear" });</script>
</body>`,
    );
    const { assetId } = await uploadProject(
      svc,
      svc.apiKey,
      buildZip([{ name: "index.html", data: page }]),
    );
    const submitted = await api(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: { project: { type: "asset_id", asset_id: assetId }, fps: 2, quality: "draft" },
    });
    const record = renderRecordSchema.parse(await pollUntilTerminal(submitted.body.data.render_id));
    expect(record.failure_message ?? record.status).toBe("completed");
    expect(record.warnings).toEqual([]);
    expect(record.libraries).toEqual([
      {
        package: "animejs",
        requested: "3",
        version: expect.stringMatching(/^3\.\d+\.\d+$/),
        integrity: expect.stringMatching(/^sha512-/),
        path: "lib/anime.min.js",
      },
    ]);
  });

  it("bills a 4k render at 1.5 credits per started second and delivers 3840x2160", async () => {
    const { assetId } = await uploadProject(
      svc,
      svc.apiKey,
      buildZip([{ name: "index.html", data: compositionHtml({ seconds: 1 }) }]),
    );
    const submitted = await api(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: {
        project: { type: "asset_id", asset_id: assetId },
        fps: 2,
        quality: "draft",
        resolution: "4k",
      },
    });
    const record = await pollUntilTerminal(submitted.body.data.render_id);
    expect(record).toMatchObject({
      status: "completed",
      resolution: "4k",
      duration: 1,
      credits_charged: 1.5,
    });
    const file = join(dir, "4k.mp4");
    const { video_url } = await freshUrls(submitted.body.data.render_id);
    await writeFile(file, Buffer.from(await (await fetch(video_url)).arrayBuffer()));
    expect((await probeMedia(file)).streams.find((s) => s.type === "video")).toMatchObject({
      width: 3840,
      height: 2160,
    });
  });

  it("stops a render that is deleted while it runs, purges it and charges nothing", async () => {
    const before = (await api(svc, "GET", "/v3/users/me", { key: svc.apiKey })).body.data.billing
      .credits_used;
    const { assetId } = await uploadProject(
      svc,
      svc.apiKey,
      buildZip([{ name: "index.html", data: compositionHtml({ seconds: 30 }) }]),
    );
    const submitted = await api(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: { project: { type: "asset_id", asset_id: assetId }, fps: 30 },
    });
    const renderId: string = submitted.body.data.render_id;
    await waitFor("the render to start", async () => {
      const current = await api(svc, "GET", `/v3/svc/renders/${renderId}`, { key: svc.apiKey });
      return current.body.data.status === "rendering" ? true : undefined;
    });
    expect(
      (await api(svc, "DELETE", `/v3/svc/renders/${renderId}`, { key: svc.apiKey })).status,
    ).toBe(200);
    expect((await api(svc, "GET", `/v3/svc/renders/${renderId}`, { key: svc.apiKey })).status).toBe(
      404,
    );
    await waitFor("the worker to abandon the deleted render", async () =>
      svc
        .logs()
        .split("\n")
        .some((line) => line.includes(renderId) && line.includes("render abandoned"))
        ? true
        : undefined,
    );
    const after = (await api(svc, "GET", "/v3/users/me", { key: svc.apiKey })).body.data.billing
      .credits_used;
    expect(after).toBe(before);
  });
});
