// templates/preview-render with S3_BUCKET set, against a real S3-compatible server (OpenStack
// Swift's s3api, started here on loopback): a bucket it cannot use stops the start with the
// variable to fix; a finished render is one object in the bucket, GET /renders/:name redirects to
// it (a presigned URL the store checks) and the store serves it with Range; an unknown name is
// 404; a render killed at the time limit leaves nothing in the bucket. Without Swift (non-root)
// the file is skipped with the apt line; in CI it runs, and a missing Swift fails it.
import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { rm } from "node:fs/promises";
import { expect, test } from "@playwright/test";
import { startS3Server, swiftMissing, type S3Server } from "../src/server/testing/s3-server";
import { call, longComposition, probeStored, startTemplate, waitForResult } from "./template-app";

const inCi = !/^(|0|false|no|off)$/i.test((process.env.CI ?? "").trim());
const missing = swiftMissing();
test.skip(Boolean(missing) && !inCi, missing ?? "");

let s3: S3Server;
let client: S3Client;

test.beforeAll(async () => {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  s3 = await startS3Server();
  client = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
});
test.afterAll(async () => {
  client?.destroy();
  await s3?.stop();
});

/** The template's settings for the test store, its videos under `prefix`. */
function s3Env(prefix: string, changes: Record<string, string> = {}): Record<string, string> {
  return {
    S3_BUCKET: s3.bucket,
    S3_PREFIX: prefix,
    AWS_ENDPOINT_URL: s3.endpoint,
    AWS_REGION: s3.region,
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    ...changes,
  };
}

/** Every object under `prefix`, with its size. */
async function objects(prefix: string): Promise<{ key: string; size: number }[]> {
  const listed = await client.send(
    new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${prefix}/` }),
  );
  return (listed.Contents ?? []).map((object) => ({ key: object.Key!, size: object.Size! }));
}

test("a bucket the template cannot use stops the start with the variable to fix", async () => {
  const refused = (changes: Record<string, string>) => startTemplate(s3Env("x", changes));
  // Three starts at once: each is refused before it listens.
  await Promise.all([
    expect(refused({ AWS_SECRET_ACCESS_KEY: "not-the-secret" })).rejects.toThrow(
      /exited with 2 before listening:[^]*refused the credentials for bucket "svc-test" \(HTTP 403\): check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    ),
    expect(refused({ S3_BUCKET: "no-such-bucket" })).rejects.toThrow(
      /exited with 2 before listening:[^]*There is no bucket "no-such-bucket" at http:\/\/127\.0\.0\.1:\d+: check S3_BUCKET/,
    ),
    // Port 1 on loopback: nothing listens there.
    expect(refused({ AWS_ENDPOINT_URL: "http://127.0.0.1:1" })).rejects.toThrow(
      /exited with 2 before listening:[^]*http:\/\/127\.0\.0\.1:1 could not be reached \(ECONNREFUSED[^]*check AWS_ENDPOINT_URL/,
    ),
  ]);
});

test("sync mode: the video is one object in the bucket, /renders/:name redirects to it and the store serves it with Range", async () => {
  const prefix = `sync-${Date.now()}`;
  const app = await startTemplate(s3Env(prefix, { RENDER_MODE: "sync" }));
  try {
    await expect.poll(() => app.logs()).toContain(`videos in s3://${s3.bucket}/${prefix}`);
    const answer = await call(app, "POST", "/api/render", { fps: 2, quality: "draft" });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      status: "done",
      url: expect.stringMatching(/^\/renders\/call_[0-9a-f]{16}\.mp4$/),
    });
    const name = (answer.body.url as string).split("/").pop()!;
    const [object, ...others] = await objects(prefix);
    expect(others).toEqual([]);
    expect(object?.key).toBe(`${prefix}/${name}`);
    // Nothing on the server's disk: the data folder holds only emptied scratch space.
    expect(await app.storedFiles()).toEqual([]);

    const redirect = await fetch(`${app.url}${answer.body.url}`, { redirect: "manual" });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("cache-control")).toBe("no-store");
    const location = redirect.headers.get("location")!;
    expect(location.startsWith(`${s3.endpoint}/${s3.bucket}/${prefix}/${name}?`)).toBe(true);
    expect(location).toContain("X-Amz-Signature=");

    // fetch follows the redirect, as a browser's <video> does.
    const stored = await probeStored(app, answer.body.url);
    expect(stored.video).toMatchObject({ codec: "h264", width: 1920, height: 1080, fps: 2 });
    expect(stored.bytes.length).toBe(object!.size);
    const part = await fetch(location, { headers: { range: "bytes=100-199" } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(stored.bytes.subarray(100, 200));
    // The signature covers the object: another key with this URL's query is refused by the store.
    expect((await fetch(location.replace(name, `x${name}`))).status).toBe(403);

    const unknown = await call(app, "GET", "/renders/call_0000000000000000.mp4");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
    expect((await call(app, "GET", "/renders/..%2Fsecret.mp4")).status).toBe(404);
    // The result is found in the bucket by its name, as after a restart.
    const found = await call(app, "GET", `/api/render/${answer.body.call_id}`);
    expect(found.body).toMatchObject({ status: "done", url: answer.body.url });
  } finally {
    await app.stop();
  }
});

test("async mode: a render killed at the time limit leaves nothing in the bucket and says why", async () => {
  const prefix = `timeout-${Date.now()}`;
  const compositions = await longComposition();
  const app = await startTemplate(
    s3Env(prefix, { COMPOSITIONS_DIR: compositions, RENDER_TIME_LIMIT_SECONDS: "4" }),
  );
  try {
    const posted = await call(app, "POST", "/api/render", { composition: "long", fps: 30 });
    expect(posted.status).toBe(202);
    const { answer } = await waitForResult(app, posted.body.call_id);
    expect(answer.body).toMatchObject({ status: "failed", error: { code: "render_timeout" } });
    expect(await objects(prefix)).toEqual([]);
    expect((await call(app, "GET", `/api/render/${posted.body.call_id}`)).body.status).toBe(
      "failed",
    );
  } finally {
    await app.stop();
    await rm(compositions, { recursive: true, force: true });
  }
});
