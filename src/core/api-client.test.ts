// The API client against the real service (API only, no render workers).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startService, type ServiceProcess } from "../server/testing/service-process";
import { ApiClient } from "./api-client";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClientError } from "./errors";
import { renderOnService, type RenderEvent } from "./pipeline";
import { newIdempotencyKey } from "./render-request";

let service: ServiceProcess;

beforeAll(async () => {
  service = await startService({ jobs: 0 });
});

afterAll(async () => {
  await service?.kill();
});

describe("api client", () => {
  it("on 401 asks the refresh hook once and replays with the fresh credential", async () => {
    let refreshed = 0;
    const client = new ApiClient({
      baseUrl: service.url,
      credential: "svc_key_expiredToken000000",
      refreshCredential: async () => {
        refreshed++;
        return service.apiKey;
      },
    });
    expect((await client.me()).email).toBe("local@localhost");
    expect(refreshed).toBe(1);
  });

  it("replays only once: a refresh that does not help ends in authentication_failed with a hint", async () => {
    let refreshed = 0;
    const client = new ApiClient({
      baseUrl: service.url,
      credential: "svc_key_badKey0000000000000",
      refreshCredential: async () => {
        refreshed++;
        return "svc_key_stillBad00000000000";
      },
    });
    const error = await client.me().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ code: "authentication_failed", status: 401 });
    expect((error as ClientError).hint).toBe("Sign in again, or use a valid API key.");
    expect((error as ClientError).message).not.toContain("stillBad");
    expect(refreshed).toBe(1);
  });

  it("gives the service's code, message and a hint for API errors", async () => {
    const client = new ApiClient({ baseUrl: service.url, credential: service.apiKey });
    await expect(client.getRender("rndr_doesNotExist")).rejects.toMatchObject({
      code: "svc_render_not_found",
      status: 404,
      message: "no render rndr_doesNotExist (svc_render_not_found, HTTP 404)",
      hint: "Check the render id.",
    });
  });

  it("fails fast with a network error and a hint when nothing listens", async () => {
    const client = new ApiClient({ baseUrl: "http://127.0.0.1:9", credential: "k", retryLimit: 0 });
    await expect(client.me()).rejects.toMatchObject({
      code: "network_error",
      hint: "Check the service URL and your connection.",
    });
  });

  it("same idempotency key and body replays the asset; a different body is a conflict", async () => {
    const client = new ApiClient({ baseUrl: service.url, credential: service.apiKey });
    const body = {
      filename: "p.zip",
      content_type: "application/zip" as const,
      size_bytes: 10,
      checksum_sha256: "a".repeat(64),
    };
    const first = await client.createAsset(body, "test:key-1");
    const second = await client.createAsset(body, "test:key-1");
    expect(second.data.asset_id).toBe(first.data.asset_id);
    expect([first.replayed, second.replayed]).toEqual([false, true]);
    await expect(
      client.createAsset({ ...body, size_bytes: 11 }, "test:key-1"),
    ).rejects.toMatchObject({
      code: "svc_idempotency_conflict",
      status: 409,
    });
  });
});

describe("render pipeline with no render workers", () => {
  it("uploads, submits, reports resumable state, and gives up after --max-wait with a resume hint", async () => {
    const root = await mkdtemp(join(tmpdir(), "svc-pipeline-test-"));
    await writeFile(
      join(root, "index.html"),
      `<div data-composition-id="m" data-width="1080" data-height="1080" data-duration="1"></div>`,
    );
    const client = new ApiClient({ baseUrl: service.url, credential: service.apiKey });
    const events: RenderEvent[] = [];
    const error = await renderOnService(
      {
        client,
        project: { type: "dir", dir: root },
        fps: 2,
        quality: "draft",
        format: "mp4",
        resolution: "1080p",
        composition: "index.html",
        pollIntervalMs: 100,
        maxWaitMs: 500,
        idempotencyKey: newIdempotencyKey("svc-test"),
      },
      { onEvent: (event) => events.push(event) },
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "max_wait_exceeded" });
    const stages = events.filter((e) => e.type === "stage").map((e) => e.stage);
    expect(stages).toEqual(["scan", "archive", "upload", "submit", "render"]);
    const states = events.flatMap((e) => (e.type === "state" ? [e.state] : []));
    const last = states[states.length - 1]!;
    expect(last.assetId).toMatch(/^asst_/);
    expect(last.renderId).toMatch(/^rndr_/);
    expect(last.idempotencyKey).toMatch(/^svc-test:[0-9a-f-]{36}$/);
    expect((error as ClientError).params).toEqual({ renderId: last.renderId });
    const record = await client.getRender(last.renderId!);
    expect(record).toMatchObject({ status: "queued", aspect_ratio: "1:1" });
    const uploads = events.flatMap((e) => (e.type === "upload-progress" ? [e] : []));
    expect(uploads.length).toBeGreaterThan(0);
    expect(uploads[uploads.length - 1]!.bytes).toBe(uploads[uploads.length - 1]!.totalBytes);
  });
});
