// The service end to end on S3 storage (the "scale-out" test project's Swift): the API hands out URLs of
// the object store, clients PUT and GET there — no object bytes pass through the API — and the
// service checks, renders from and stores to the bucket. The upload goes through the svc client
// library unchanged (got, a Content-Length, which S3 needs) as well as through plain fetch.
import { CreateBucketCommand, DeleteBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../core/api-client";
import { uploadArchive } from "../core/upload";
import { probeMedia } from "../engine/testing/probe";
import { webhookPayloadSchema } from "../shared/api";
import type { Receiver } from "./testing/https-receiver";
import {
  api,
  sha256,
  startService,
  startServiceWithReceiver,
  waitForTerminalRender,
  type ServiceProcess,
} from "./testing/service-process";
import { buildZip, compositionHtml } from "./testing/zip-builder";
import { waitFor } from "../shared/testing/wait-for";

let svc: ServiceProcess;
let receiver: Receiver;
let dir: string;

beforeAll(async () => {
  ({ svc, receiver, dir } = await startServiceWithReceiver({
    jobs: 1,
  }));
  expect(svc.s3).toBeDefined();
});

afterAll(async () => {
  await svc?.kill();
  await receiver?.close();
});

const zip = buildZip([
  { name: "index.html", data: compositionHtml({ seconds: 1 }), deflate: true },
]);

describe("the service on S3 storage", () => {
  it("hands out a presigned URL of the object store; a raw client PUTs the zip there, not to the API", async () => {
    const created = await api(svc, "POST", "/v3/assets", {
      key: svc.apiKey,
      body: {
        filename: "project.zip",
        content_type: "application/zip",
        size_bytes: zip.length,
        checksum_sha256: sha256(zip),
      },
    });
    expect(created.status).toBe(201);
    const { asset_id: assetId, upload_url: uploadUrl, upload_headers: headers } = created.body.data;
    expect(uploadUrl.startsWith(svc.storageUrl)).toBe(true);
    expect(headers).toEqual({
      "content-type": "application/zip",
      "content-length": String(zip.length),
      "x-amz-checksum-sha256": Buffer.from(sha256(zip), "hex").toString("base64"),
    });
    const put = await fetch(uploadUrl, { method: "PUT", headers, body: new Uint8Array(zip) });
    expect(put.status).toBe(200);

    const complete = await api(svc, "POST", `/v3/assets/${assetId}/complete`, {
      key: svc.apiKey,
    });
    expect(complete.status).toBe(200);
    expect(complete.body.data).toMatchObject({ asset_id: assetId, status: "ready" });
    expect(complete.body.data.url.startsWith(svc.storageUrl)).toBe(true);
    const stored = await fetch(complete.body.data.url);
    expect(sha256(Buffer.from(await stored.arrayBuffer()))).toBe(sha256(zip));

    // The API took no object bytes and serves no storage routes of its own.
    expect(svc.logs()).not.toContain('"method":"PUT"');
    const local = await fetch(`${svc.url}/storage/uploads/${assetId}.zip`, {
      method: "PUT",
      body: new Uint8Array(zip),
    });
    expect(local.status).toBe(404);
    expect((await api(svc, "GET", "/readyz")).status).toBe(200);
  });

  it("takes the svc client's upload unchanged, renders from the bucket, and the store serves the video and thumbnail by presigned GETs", async () => {
    const project = buildZip([
      { name: "index.html", data: compositionHtml({ seconds: 1 }), deflate: true },
      { name: "notes.txt", data: "uploaded by the svc client" },
    ]);
    const file = join(dir, "project.zip");
    await writeFile(file, project);
    const client = new ApiClient({ baseUrl: svc.url, credential: svc.apiKey });
    const uploaded = await uploadArchive(
      client,
      { path: file, sizeBytes: project.length, sha256: sha256(project) },
      { idempotencyKey: "s3-flow-upload" },
    );
    expect(uploaded).toMatchObject({ deduplicated: false });
    const submitted = await api(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: {
        project: { type: "asset_id", asset_id: uploaded.assetId },
        fps: 5,
        quality: "draft",
        callback_url: `${receiver.url}/hook`,
        callback_id: "s3-flow",
      },
    });
    expect(submitted.status).toBe(201);
    const renderId: string = submitted.body.data.render_id;
    const record = await waitForTerminalRender(svc, renderId);
    expect(record).toMatchObject({ status: "completed", duration: 1, credits_charged: 1 });
    expect(record.video_url.startsWith(svc.storageUrl)).toBe(true);
    expect(new URL(record.video_url).searchParams.get("X-Amz-Expires")).toBe("900");

    const video = await fetch(record.video_url);
    expect(video.status).toBe(200);
    expect(video.headers.get("content-type")).toBe("video/mp4");
    const bytes = Buffer.from(await video.arrayBuffer());
    await writeFile(join(dir, "video.mp4"), bytes);
    const info = await probeMedia(join(dir, "video.mp4"));
    expect(info.streams.find((s) => s.type === "video")).toMatchObject({ codec: "h264" });
    const partial = await fetch(record.video_url, { headers: { range: "bytes=0-99" } });
    expect(partial.status).toBe(206);
    expect(partial.headers.get("content-range")).toBe(`bytes 0-99/${bytes.length}`);
    const thumbnail = await fetch(record.thumbnail_url);
    expect(thumbnail.headers.get("content-type")).toBe("image/jpeg");
    expect(Buffer.from(await thumbnail.arrayBuffer()).subarray(0, 3)).toEqual(
      Buffer.from([0xff, 0xd8, 0xff]),
    );
    const tampered = new URL(record.video_url);
    const signature = tampered.searchParams.get("X-Amz-Signature")!;
    tampered.searchParams.set(
      "X-Amz-Signature",
      (signature[0] === "0" ? "1" : "0") + signature.slice(1),
    );
    expect((await fetch(tampered)).status).toBe(403);

    const delivery = await waitFor("the webhook", async () =>
      receiver.deliveries.find((d) => d.body.includes('"s3-flow"')),
    );
    const payload = webhookPayloadSchema.strict().parse(JSON.parse(delivery.body));
    expect(payload.video_url?.startsWith(svc.storageUrl)).toBe(true);
    expect((await fetch(payload.video_url!)).status).toBe(200);

    // Deleting the render purges its objects from the bucket.
    const fresh = (await api(svc, "GET", `/v3/svc/renders/${renderId}`, { key: svc.apiKey })).body
      .data;
    expect(
      (await api(svc, "DELETE", `/v3/svc/renders/${renderId}`, { key: svc.apiKey })).status,
    ).toBe(200);
    expect((await fetch(fresh.video_url)).status).toBe(404);
    expect((await fetch(fresh.thumbnail_url)).status).toBe(404);
  });

  it("answers /readyz 503 while its bucket cannot be used", async () => {
    const store = svc.s3!;
    const client = new S3Client({
      endpoint: store.endpoint,
      region: store.region,
      forcePathStyle: true,
      credentials: store,
    });
    const bucket = "svc-readyz";
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    const other = await startService({ jobs: 0, storage: { ...store, bucket } });
    try {
      expect((await api(other, "GET", "/readyz")).status).toBe(200);
      await client.send(new DeleteBucketCommand({ Bucket: bucket }));
      const unready = await api(other, "GET", "/readyz");
      expect(unready.status).toBe(503);
      expect(unready.body.error.message).toBe("the object store is not reachable");
    } finally {
      await other.kill();
      client.destroy();
    }
  });
});
