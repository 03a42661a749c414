// S3ObjectStore against a real S3-compatible server (OpenStack Swift's s3api, started for the
// "scale-out" test project by testing/scale-out-global-setup.ts), and presigned URLs used by a raw client (plain fetch), as the API's
// clients use them. The refusals asserted here come from the object store, not from our code.
import { HeadObjectCommand } from "@aws-sdk/client-s3";
import { createHash } from "node:crypto";
import { readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../config";
import type { S3Coordinates } from "../testing/s3-server";
import { buildZip, compositionHtml } from "../testing/zip-builder";
import { ObjectTooLargeError } from "./object-store";
import { openObjectStore } from "./open-store";
import { S3ObjectStore, s3StoreOptionsFromEnv } from "./s3-store";

const server = inject("s3Server");
let store: S3ObjectStore;
const prefix = `run-${Date.now()}/objects`;
const scratchDir = join(tmpdir(), `svc-s3-store-test-${process.pid}`);

function storeOn(s3: S3Coordinates, options: { now?: () => number; secret?: string } = {}) {
  return new S3ObjectStore({
    bucket: s3.bucket,
    prefix,
    region: s3.region,
    endpoint: s3.endpoint,
    credentials: {
      accessKeyId: s3.accessKeyId,
      secretAccessKey: options.secret ?? s3.secretAccessKey,
    },
    scratchDir,
    ...(options.now ? { now: options.now } : {}),
  });
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const text = async (response: Response) => (await response.text()).slice(0, 400);

describe("s3StoreOptionsFromEnv", () => {
  const env = {
    SVC_STORAGE_URL: "s3://svc-media/renders/prod/",
    AWS_ENDPOINT_URL: "http://10.0.0.4:8080/",
    AWS_ACCESS_KEY_ID: "id",
    AWS_SECRET_ACCESS_KEY: "secret",
  };

  it("reads the bucket, prefix, endpoint and credentials", () => {
    expect(s3StoreOptionsFromEnv(env, "/tmp/x")).toEqual({
      bucket: "svc-media",
      prefix: "renders/prod",
      region: "us-east-1",
      endpoint: "http://10.0.0.4:8080",
      credentials: { accessKeyId: "id", secretAccessKey: "secret" },
      scratchDir: "/tmp/x",
    });
  });

  it("names the variable to fix when the configuration is wrong", () => {
    const error = (changes: Record<string, string | undefined>) => {
      try {
        s3StoreOptionsFromEnv({ ...env, ...changes }, "/tmp/x");
      } catch (caught) {
        return (caught as Error).message;
      }
      return "no error";
    };
    expect(error({ SVC_STORAGE_URL: "https://svc-media/x" })).toMatch(/^SVC_STORAGE_URL must/);
    expect(error({ SVC_STORAGE_URL: "s3://Bad_Bucket" })).toMatch(/not a bucket name/);
    expect(error({ SVC_STORAGE_URL: "s3://svc-media/../up" })).toMatch(/SVC_STORAGE_URL.*prefix/);
    expect(error({ AWS_ENDPOINT_URL: "10.0.0.4:8080" })).toMatch(/^AWS_ENDPOINT_URL must/);
    expect(error({ AWS_ENDPOINT_URL: undefined })).toMatch(/set AWS_REGION/);
    expect(error({ AWS_SECRET_ACCESS_KEY: "" })).toMatch(
      /both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    );
  });
});

describe("S3ObjectStore on Swift", () => {
  beforeAll(() => {
    store = storeOn(server);
  });
  afterAll(async () => {
    store?.close();
    await rm(scratchDir, { recursive: true, force: true });
  });

  it("puts, reads whole and by range, stats, moves and deletes objects under its prefix", async () => {
    const bytes = Buffer.from("0123456789abcdefghij");
    expect(await store.put("a/one.bin", bytes)).toEqual({ size: 20 });
    const head = await store.client.send(
      new HeadObjectCommand({ Bucket: server.bucket, Key: `${prefix}/a/one.bin` }),
    );
    expect(head.ContentLength).toBe(20);
    expect(await store.stat("a/one.bin")).toEqual({ size: 20 });
    const whole = await store.get("a/one.bin");
    expect(whole?.size).toBe(20);
    expect(Buffer.concat(await whole!.stream.toArray()).toString()).toBe(bytes.toString());
    const range = await store.get("a/one.bin", { start: 10, end: 14 });
    expect(range?.size).toBe(20);
    expect(Buffer.concat(await range!.stream.toArray()).toString()).toBe("abcde");

    await store.move("a/one.bin", "b/two.bin");
    expect(await store.stat("a/one.bin")).toBeUndefined();
    expect(await store.stat("b/two.bin")).toEqual({ size: 20 });
    await store.delete("b/two.bin");
    await store.delete("b/two.bin");
    expect(await store.stat("b/two.bin")).toBeUndefined();
    expect(await store.get("b/two.bin")).toBeUndefined();
  });

  it("streams a body of unknown length longer than one part as a multipart upload", async () => {
    const part = Buffer.alloc(1024 * 1024, 7);
    const chunks = Array.from({ length: 17 }, (_, i) => Buffer.concat([part, Buffer.from([i])]));
    const expected = Buffer.concat(chunks);
    expect(await store.put("renders/video.mp4", Readable.from(chunks))).toEqual({
      size: expected.length,
    });
    const local = await store.toLocalFile("renders/video.mp4");
    expect(sha256(await readFile(local.path))).toBe(sha256(expected));
    await local.release();
    await expect(stat(local.path)).rejects.toThrow();
    const url = await store.signGet("renders/video.mp4", { expiresInSeconds: 60 });
    const response = await fetch(url, { headers: { range: "bytes=-2" } });
    expect(response.status).toBe(206);
    expect(response.headers.get("content-type")).toBe("video/mp4");
    expect([...new Uint8Array(await response.arrayBuffer())]).toEqual([7, 16]);
  });

  it("stops a streamed put past maxBytes and leaves no object", async () => {
    await expect(
      store.put("uploads/big.zip", Readable.from([Buffer.alloc(6), Buffer.alloc(6)]), {
        maxBytes: 10,
      }),
    ).rejects.toBeInstanceOf(ObjectTooLargeError);
    expect(await store.stat("uploads/big.zip")).toBeUndefined();
  });

  describe("presigned URLs, checked by the store", () => {
    const zip = buildZip([{ name: "index.html", data: compositionHtml() }]);
    const sign = (key: string, bytes = zip, s3 = store) =>
      s3.signPut(key, { sizeBytes: bytes.length, sha256: sha256(bytes), expiresInSeconds: 60 });

    it("takes a raw client's PUT of the zip with the signed URL and headers, and serves it back", async () => {
      const { url, headers } = await sign("uploads/raw.zip");
      expect(headers).toEqual({
        "content-length": String(zip.length),
        "x-amz-checksum-sha256": Buffer.from(sha256(zip), "hex").toString("base64"),
      });
      expect(new URL(url).searchParams.get("X-Amz-SignedHeaders")).toBe(
        "content-length;host;x-amz-checksum-sha256",
      );
      const put = await fetch(url, {
        method: "PUT",
        headers: { "content-type": "application/zip", ...headers },
        body: new Uint8Array(zip),
      });
      expect(put.status, await text(put)).toBe(200);
      expect(await store.stat("uploads/raw.zip")).toEqual({ size: zip.length });
      const get = await fetch(await store.signGet("uploads/raw.zip", { expiresInSeconds: 60 }));
      expect(get.status).toBe(200);
      expect(sha256(Buffer.from(await get.arrayBuffer()))).toBe(sha256(zip));
    });

    it("refuses a PUT whose size differs from the signed size", async () => {
      const { url, headers } = await sign("uploads/longer.zip");
      const longer = Buffer.concat([zip, Buffer.from("x")]);
      const put = await fetch(url, {
        method: "PUT",
        headers: { "x-amz-checksum-sha256": headers["x-amz-checksum-sha256"]! },
        body: new Uint8Array(longer),
      });
      expect(put.status).toBe(403);
      expect(await text(put)).toContain("SignatureDoesNotMatch");
      const shorter = await fetch(url, {
        method: "PUT",
        headers: { "x-amz-checksum-sha256": headers["x-amz-checksum-sha256"]! },
        body: new Uint8Array(zip.subarray(1)),
      });
      expect(shorter.status).toBe(403);
      expect(await store.stat("uploads/longer.zip")).toBeUndefined();
    });

    it("refuses a PUT declaring another checksum, or none", async () => {
      const { url, headers } = await sign("uploads/other.zip");
      const other = Buffer.from(sha256(Buffer.from("other bytes")), "hex").toString("base64");
      const wrong = await fetch(url, {
        method: "PUT",
        headers: { ...headers, "x-amz-checksum-sha256": other },
        body: new Uint8Array(zip),
      });
      expect(wrong.status).toBe(403);
      expect(await text(wrong)).toContain("SignatureDoesNotMatch");
      const none = await fetch(url, { method: "PUT", body: new Uint8Array(zip) });
      expect(none.status).toBe(403);
      expect(await store.stat("uploads/other.zip")).toBeUndefined();
    });

    it("does not verify the body against x-amz-checksum-sha256 (Swift 2.30; complete recomputes it)", async () => {
      // Same length, other bytes, the declared checksum header: AWS S3 answers 400 BadDigest;
      // Swift takes it. This is why `complete` hashes the stored object whatever the store.
      const { url, headers } = await sign("uploads/swapped.zip");
      const swapped = Buffer.from(zip);
      swapped.writeUInt8(swapped.readUInt8(0) ^ 0xff, 0);
      const put = await fetch(url, { method: "PUT", headers, body: new Uint8Array(swapped) });
      expect(put.status).toBe(200);
      const local = await store.toLocalFile("uploads/swapped.zip");
      expect(sha256(await readFile(local.path))).not.toBe(sha256(zip));
      await local.release();
    });

    it("refuses an expired URL", async () => {
      const anHourAgo = storeOn(server, { now: () => Date.now() - 3_600_000 });
      const { url, headers } = await sign("uploads/late.zip", zip, anHourAgo);
      const put = await fetch(url, { method: "PUT", headers, body: new Uint8Array(zip) });
      expect(put.status).toBe(403);
      expect(await text(put)).toContain("Request has expired");
      await store.put("uploads/late.zip", zip);
      const get = await fetch(
        await anHourAgo.signGet("uploads/late.zip", { expiresInSeconds: 60 }),
      );
      expect(get.status).toBe(403);
      anHourAgo.close();
    });

    it("refuses a GET URL with a tampered key, expiry or signature, or signed with a wrong secret", async () => {
      await store.put("renders/thumb.jpg", Buffer.from("jpeg"));
      const url = await store.signGet("renders/thumb.jpg", { expiresInSeconds: 60 });
      const good = await fetch(url);
      expect(good.status).toBe(200);
      expect(good.headers.get("content-type")).toBe("image/jpeg");
      const key = new URL(url);
      key.pathname = key.pathname.replace("thumb.jpg", "other.jpg");
      const expiry = new URL(url);
      expiry.searchParams.set("X-Amz-Expires", "604800");
      const signature = new URL(url);
      const original = signature.searchParams.get("X-Amz-Signature")!;
      signature.searchParams.set(
        "X-Amz-Signature",
        (original[0] === "0" ? "1" : "0") + original.slice(1),
      );
      const impostor = storeOn(server, { secret: "not-the-secret" });
      const forged = await impostor.signGet("renders/thumb.jpg", { expiresInSeconds: 60 });
      impostor.close();
      for (const tampered of [key.href, expiry.href, signature.href, forged]) {
        const response = await fetch(tampered);
        expect(response.status, tampered).toBe(403);
      }
    });
  });

  describe("openObjectStore", () => {
    const config = loadConfig({ dataDir: join(tmpdir(), "svc-open-store-test") }, {});
    const local = { signingSecret: "s", baseUrl: () => "http://127.0.0.1:1" };
    const envOf = (changes: Record<string, string> = {}) => ({
      SVC_STORAGE_URL: `s3://${server.bucket}/${prefix}`,
      AWS_ENDPOINT_URL: server.endpoint,
      AWS_ACCESS_KEY_ID: server.accessKeyId,
      AWS_SECRET_ACCESS_KEY: server.secretAccessKey,
      ...changes,
    });
    const startError = (env: Record<string, string>) =>
      openObjectStore(config, local, env).then(
        () => "opened",
        (error: Error) => error.message,
      );

    it("opens the bucket when SVC_STORAGE_URL is set, and the data dir otherwise", async () => {
      const opened = await openObjectStore(config, local, envOf());
      expect(opened).toBeInstanceOf(S3ObjectStore);
      await opened.check();
      (opened as S3ObjectStore).close();
      expect((await openObjectStore(config, local, {})).constructor.name).toBe("LocalObjectStore");
    });

    it("stops the start with the variable to fix when the bucket cannot be used", async () => {
      expect(await startError(envOf({ AWS_SECRET_ACCESS_KEY: "wrong" }))).toMatch(
        /refused the credentials .*AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
      );
      expect(await startError(envOf({ SVC_STORAGE_URL: "s3://no-such-bucket" }))).toMatch(
        /bucket in SVC_STORAGE_URL does not exist/,
      );
      expect(await startError(envOf({ AWS_ENDPOINT_URL: "http://127.0.0.1:9" }))).toMatch(
        /cannot reach the object store .*check AWS_ENDPOINT_URL/,
      );
      const longUrls = loadConfig(
        { dataDir: config.dataDir },
        { SVC_SERVER_DOWNLOAD_URL_TTL_SECONDS: "700000" },
      );
      expect(
        await openObjectStore(longUrls, local, envOf()).catch((e: Error) => e.message),
      ).toMatch(/SVC_SERVER_DOWNLOAD_URL_TTL_SECONDS must be at most 604800/);
    });
  });
});
