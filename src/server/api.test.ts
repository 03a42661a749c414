// The /v3 API of SPEC.md section 4 over real HTTP against a real service process (real SQLite,
// real storage). This process runs no render workers, so renders stay queued: every rule and
// error code here is decided at the API. Real renders are in render-flow.test.ts.
import { readdir, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assetRecordSchema,
  completeAssetResponseSchema,
  createAssetResponseSchema,
  dataEnvelope,
  renderListSchema,
  renderRecordSchema,
  submitRenderResponseSchema,
  userRecordSchema,
} from "../shared/api";
import { buildZip, compositionHtml } from "./testing/zip-builder";
import {
  api,
  runCli,
  sha256,
  startService,
  uploadProject,
  type ServiceProcess,
} from "./testing/service-process";

let svc: ServiceProcess;
let assetId: string;
const variables = [
  { id: "title", type: "string", label: "Title", default: "Hello", maxLength: 20 },
  { id: "speed", type: "number", label: "Speed", default: 1, min: 0, max: 5 },
];
const projectZip = buildZip([
  { name: "index.html", data: compositionHtml({ variables }), deflate: true },
]);

beforeAll(async () => {
  svc = await startService({ jobs: 0 });
  const uploaded = await uploadProject(svc, svc.apiKey, projectZip);
  expect(uploaded.complete.status).toBe(200);
  assetId = uploaded.assetId;
});

afterAll(async () => {
  await svc?.kill();
});

const submit = (
  body: Record<string, unknown>,
  key = svc.apiKey,
  headers: Record<string, string> = {},
) =>
  api(svc, "POST", "/v3/svc/renders", {
    key,
    body: { project: { type: "asset_id", asset_id: assetId }, ...body },
    headers,
  });

describe("service basics", () => {
  it("answers health and readiness without a key", async () => {
    expect((await api(svc, "GET", "/healthz")).body).toEqual({ data: { status: "ok" } });
    expect((await api(svc, "GET", "/readyz")).status).toBe(200);
  });

  it("refuses a missing or bad API key with 401 authentication_failed and accepts Bearer", async () => {
    const none = await api(svc, "GET", "/v3/users/me");
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe("authentication_failed");
    const bad = await api(svc, "GET", "/v3/users/me", { key: "svc_key_nottherightkeyatall" });
    expect(bad.status).toBe(401);
    expect(bad.body.error.code).toBe("authentication_failed");
    const bearer = await api(svc, "GET", "/v3/users/me", {
      headers: { authorization: `Bearer ${svc.apiKey}` },
    });
    expect(bearer.status).toBe(200);
  });

  it("shows the local account with its credits on /v3/users/me", async () => {
    const me = await api(svc, "GET", "/v3/users/me", { key: svc.apiKey });
    expect(me.body.data).toMatchObject({
      email: "local@localhost",
      username: "local",
      billing: { plan: "local", credits_remaining: 1_000_000, credits_used: 0 },
    });
  });

  it("writes the local credentials file 0600 and keeps secrets out of output and logs", async () => {
    // svc.db exists only when the service keeps its database in the data dir (SQLite).
    const sqlite = process.env.SVC_TEST_DATABASE !== "postgres";
    for (const file of ["credentials", "signing-secret", ...(sqlite ? ["svc.db"] : [])]) {
      expect((await stat(join(svc.dataDir, file))).mode & 0o777, file).toBe(0o600);
    }
    expect((await stat(svc.dataDir)).mode & 0o777).toBe(0o700);
    expect(svc.stdout()).not.toContain(svc.apiKey);
    await api(svc, "GET", "/v3/users/me", { key: svc.apiKey });
    const created = await api(svc, "POST", "/v3/assets", {
      key: svc.apiKey,
      body: {
        filename: "p.zip",
        content_type: "application/zip",
        size_bytes: 10,
        checksum_sha256: "a".repeat(64),
      },
    });
    const uploadUrl = new URL(created.body.data.upload_url);
    const sig = uploadUrl.searchParams.get(svc.s3 ? "X-Amz-Signature" : "sig")!;
    await fetch(uploadUrl, { method: "PUT", body: "0123456789" });
    // With S3 storage the PUT goes to the object store, not through the service.
    if (!svc.s3) expect(svc.logs()).toContain("/storage/uploads/");
    else expect(svc.logs()).not.toContain(svc.s3.secretAccessKey);
    expect(svc.logs()).not.toContain(sig);
    expect(svc.logs()).not.toContain(svc.apiKey);
  });

  it("refuses a second service on the same data dir", async () => {
    const second = await runCli([
      "server",
      "--port",
      "0",
      "--data-dir",
      svc.dataDir,
      "--jobs",
      "0",
    ]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("another svc server");
    expect(second.stderr).not.toMatch(/\n\s+at /);
  });

  it("answers unknown routes and malformed JSON with an error envelope, never a stack", async () => {
    const missing = await api(svc, "GET", "/v3/nothing-here", { key: svc.apiKey });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    const response = await fetch(`${svc.url}/v3/svc/renders`, {
      method: "POST",
      headers: { "x-api-key": svc.apiKey, "content-type": "application/json" },
      body: "{not json",
    });
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(response.status).toBe(400);
    expect(body.error.code).toBe("invalid_parameter");
    expect(JSON.stringify(body)).not.toMatch(/\bat .*\.ts:\d+/);
    const text = await fetch(`${svc.url}/v3/svc/renders`, {
      method: "POST",
      headers: { "x-api-key": svc.apiKey, "content-type": "text/plain" },
      body: "render please",
    });
    expect(text.status).toBe(400);
    expect(((await text.json()) as { error: { code: string } }).error.code).toBe(
      "invalid_parameter",
    );
  });
});

describe("assets", () => {
  it("refuses 480 entries of 4 MiB of zeros at complete, charging nothing and unpacking nothing", async () => {
    const zeros = Buffer.alloc(4 * 1024 * 1024);
    const zip = buildZip([
      { name: "index.html", data: compositionHtml() },
      ...Array.from({ length: 480 }, (_, i) => ({
        name: `pad/${i}.bin`,
        data: zeros,
        deflate: true,
      })),
    ]);
    const before = await api(svc, "GET", "/v3/users/me", { key: svc.apiKey });
    const { complete } = await uploadProject(svc, svc.apiKey, zip);
    expect(complete.status).toBe(422);
    expect(complete.body.error).toMatchObject({
      code: "svc_archive_bomb",
      message: expect.stringMatching(/unpacks to \d+ bytes.*Zip the project's files/),
    });
    const after = await api(svc, "GET", "/v3/users/me", { key: svc.apiKey });
    expect(after.body.data.billing).toEqual(before.body.data.billing);
    // Nothing unpacked: the data folder holds no file larger than the zip, nor 2 GB in all.
    expect(await folderBytes(svc.dataDir)).toBeLessThan(zip.length * 4 + 64 * 1024 * 1024);
  });

  it("creates, uploads and completes an asset, and completing again answers the same", async () => {
    const zip = buildZip([{ name: "index.html", data: compositionHtml({ seconds: 2 }) }]);
    const { assetId: id, complete } = await uploadProject(svc, svc.apiKey, zip);
    expect(complete.body.data).toEqual({
      asset_id: id,
      size_bytes: zip.length,
      status: "ready",
      deduplicated: false,
      mime_type: "application/zip",
      url: expect.stringContaining(svc.storageUrl),
    });
    const again = await api(svc, "POST", `/v3/assets/${id}/complete`, { key: svc.apiKey });
    // The same answer, with a freshly signed url.
    expect({ ...again.body.data, url: "" }).toEqual({ ...complete.body.data, url: "" });
    const record = await api(svc, "GET", `/v3/assets/${id}`, { key: svc.apiKey });
    expect(record.body.data).toMatchObject({
      asset_id: id,
      status: "ready",
      size_bytes: zip.length,
      checksum_sha256: sha256(zip),
    });
  });

  it("answers the alias path /v3/assets/direct-uploads like /v3/assets", async () => {
    const created = await api(svc, "POST", "/v3/assets/direct-uploads", {
      key: svc.apiKey,
      body: {
        filename: "p.zip",
        content_type: "application/zip",
        size_bytes: 5,
        checksum_sha256: "b".repeat(64),
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      status: "pending_upload",
      max_bytes: 5,
      upload_headers: { "content-type": "application/zip" },
    });
    expect(created.body.data.asset_id).toMatch(/^asst_/);
  });

  it("returns the existing asset when the same bytes are uploaded again (deduplicated)", async () => {
    const second = await uploadProject(svc, svc.apiKey, projectZip);
    expect(second.complete.body.data).toMatchObject({
      asset_id: assetId,
      deduplicated: true,
      status: "ready",
    });
    const record = await api(svc, "GET", `/v3/assets/${second.assetId}`, { key: svc.apiKey });
    expect(record.body.data.duplicate_of).toBe(assetId);
  });

  it("answers 409 svc_upload_not_found until the bytes exist", async () => {
    const created = await api(svc, "POST", "/v3/assets", {
      key: svc.apiKey,
      body: {
        filename: "p.zip",
        content_type: "application/zip",
        size_bytes: projectZip.length,
        checksum_sha256: sha256(projectZip),
      },
    });
    const early = await api(svc, "POST", `/v3/assets/${created.body.data.asset_id}/complete`, {
      key: svc.apiKey,
    });
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe("svc_upload_not_found");
  });

  it("refuses archives over 200 MiB with 413 svc_project_too_large, and uploads beyond the signed size", async () => {
    const big = await api(svc, "POST", "/v3/assets", {
      key: svc.apiKey,
      body: {
        filename: "p.zip",
        content_type: "application/zip",
        size_bytes: 200 * 1024 * 1024 + 1,
        checksum_sha256: "c".repeat(64),
      },
    });
    expect(big.status).toBe(413);
    expect(big.body.error).toMatchObject({ code: "svc_project_too_large", param: "size_bytes" });
    const small = await api(svc, "POST", "/v3/assets", {
      key: svc.apiKey,
      body: {
        filename: "p.zip",
        content_type: "application/zip",
        size_bytes: 10,
        checksum_sha256: "c".repeat(64),
      },
    });
    const put = await fetch(small.body.data.upload_url, { method: "PUT", body: Buffer.alloc(11) });
    if (svc.s3) {
      // The object store refuses it: the URL signs the declared Content-Length.
      expect(put.status).toBe(403);
    } else {
      expect(put.status).toBe(413);
      expect(((await put.json()) as { error: { code: string } }).error.code).toBe(
        "svc_project_too_large",
      );
    }
  });

  it("refuses tampered and re-signed upload URLs with 403", async () => {
    const created = await api(svc, "POST", "/v3/assets", {
      key: svc.apiKey,
      body: {
        filename: "p.zip",
        content_type: "application/zip",
        size_bytes: 10,
        checksum_sha256: "d".repeat(64),
      },
    });
    const url = new URL(created.body.data.upload_url);
    url.searchParams.set("size", "999999");
    expect((await fetch(url, { method: "PUT", body: Buffer.alloc(10) })).status).toBe(403);
    const other = new URL(created.body.data.upload_url);
    other.pathname = other.pathname.replace(/asst_\w+/, "asst_someoneelse");
    expect((await fetch(other, { method: "PUT", body: Buffer.alloc(10) })).status).toBe(403);
  });

  it("answers 404 svc_asset_not_found for an unknown asset", async () => {
    const response = await api(svc, "GET", "/v3/assets/asst_doesnotexist", { key: svc.apiKey });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("svc_asset_not_found");
  });
});

describe("hostile archives", () => {
  const zeros = Buffer.alloc(20 * 1024 * 1024);
  const good = buildZip([
    { name: "index.html", data: compositionHtml().repeat(20), deflate: true },
  ]);
  const cases: Array<[string, Buffer, string]> = [
    [
      "zip slip",
      buildZip([
        { name: "index.html", data: "x" },
        { name: "../../../escaped-by-zip-slip.txt", data: "pwned" },
      ]),
      "svc_archive_unsafe_path",
    ],
    [
      "an absolute path",
      buildZip([{ name: "/tmp/escaped-absolute.txt", data: "pwned" }]),
      "svc_archive_unsafe_path",
    ],
    [
      "a symlink entry",
      buildZip([
        { name: "index.html", data: "x" },
        { name: "passwd", data: "/etc/passwd", mode: 0o120777 },
      ]),
      "svc_archive_symlink",
    ],
    [
      "a zip bomb",
      buildZip([{ name: "zeros.bin", data: zeros, deflate: true }]),
      "svc_archive_bomb",
    ],
    [
      "20,000 entries",
      buildZip(Array.from({ length: 20_000 }, (_, i) => ({ name: `f/${i}.txt` }))),
      "svc_archive_too_many_entries",
    ],
    ["a truncated zip", good.subarray(0, good.length - 40), "svc_archive_corrupt"],
    ["bytes that are not a zip", Buffer.from("<html>just a page</html>"), "svc_archive_corrupt"],
  ];

  for (const [what, zip, code] of cases) {
    it(`refuses ${what} with 422 ${code}`, async () => {
      const { complete } = await uploadProject(svc, svc.apiKey, zip);
      expect(complete.status).toBe(422);
      expect(complete.body.error.code).toBe(code);
    });
  }

  it("refuses a wrong checksum with 422 svc_checksum_mismatch", async () => {
    const { complete } = await uploadProject(svc, svc.apiKey, projectZip, {
      checksum: "e".repeat(64),
    });
    expect(complete.status).toBe(422);
    expect(complete.body.error).toMatchObject({
      code: "svc_checksum_mismatch",
      param: "checksum_sha256",
    });
  });

  it("wrote nothing outside the data dir", async () => {
    const parent = dirname(svc.dataDir);
    expect(await readdir(parent)).toEqual(["data"]);
    expect(await readdir("/tmp")).not.toContain("escaped-absolute.txt");
    expect(await readdir("/tmp")).not.toContain("escaped-by-zip-slip.txt");
  });
});

describe("render submit rules", () => {
  it("queues a valid render with 201 and shows its record", async () => {
    const response = await submit({ fps: 5, title: "first", callback_id: "cb-1" });
    expect(response.status).toBe(201);
    expect(response.body.data).toEqual({
      render_id: expect.stringMatching(/^rndr_/),
      status: "queued",
    });
    const record = await api(svc, "GET", `/v3/svc/renders/${response.body.data.render_id}`, {
      key: svc.apiKey,
    });
    expect(record.body.data).toMatchObject({
      status: "queued",
      progress: 0,
      title: "first",
      fps: 5,
      quality: "standard",
      format: "mp4",
      resolution: "1080p",
      aspect_ratio: "16:9",
      composition: "index.html",
      duration: null,
      credits_charged: 0,
      video_url: null,
      thumbnail_url: null,
      callback_id: "cb-1",
    });
  });

  it("refuses fps outside 1..240 and non-integers with 400 invalid_parameter", async () => {
    for (const fps of [0, 241, 29.97, "30"]) {
      const response = await submit({ fps });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: "invalid_parameter", param: "fps" });
    }
    expect((await submit({ fps: 1 })).status).toBe(201);
    expect((await submit({ fps: 240 })).status).toBe(201);
  });

  it("refuses 4k with webm or mov with 400 invalid_parameter, and takes 4k mp4", async () => {
    for (const format of ["webm", "mov"]) {
      const response = await submit({ resolution: "4k", format });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: "invalid_parameter", param: "format" });
    }
    expect((await submit({ resolution: "4k", format: "mp4" })).status).toBe(201);
    expect((await submit({ format: "webm" })).status).toBe(201);
  });

  it("refuses unknown enum values and a missing project", async () => {
    expect((await submit({ quality: "ultra" })).body.error).toMatchObject({
      code: "invalid_parameter",
      param: "quality",
    });
    const noProject = await api(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: { fps: 30 },
    });
    expect(noProject.body.error).toMatchObject({ code: "invalid_parameter", param: "project" });
  });

  it("fails strict variables that do not match the schema with 422 svc_project_invalid", async () => {
    for (const values of [{ title: 5 }, { nope: 1 }, { speed: 9 }]) {
      const response = await submit({ variables: values, strict_variables: true });
      expect(response.status).toBe(422);
      expect(response.body.error).toMatchObject({
        code: "svc_project_invalid",
        param: "variables",
      });
    }
    expect(
      (await submit({ variables: { title: "Hi", speed: 2 }, strict_variables: true })).status,
    ).toBe(201);
    expect((await submit({ variables: { nope: 1 } })).status).toBe(201);
  });

  it("fails a missing entry file with 422 svc_project_invalid", async () => {
    const response = await submit({ composition: "missing.html" });
    expect(response.status).toBe(422);
    expect(response.body.error).toMatchObject({
      code: "svc_project_invalid",
      param: "composition",
    });
    expect((await submit({ composition: "../index.html" })).body.error.code).toBe(
      "invalid_parameter",
    );
  });

  it("answers 404 svc_asset_not_found for an unknown asset", async () => {
    const response = await api(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: { project: { type: "asset_id", asset_id: "asst_nope" } },
    });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe("svc_asset_not_found");
  });

  it("refuses callback and project URLs that are not https or point at private addresses", async () => {
    const http = await submit({ callback_url: "http://example.com/hook" });
    expect(http.body.error).toMatchObject({ code: "invalid_parameter", param: "callback_url" });
    const internal = await submit({ callback_url: "https://127.0.0.1:9/hook" });
    expect(internal.body.error).toMatchObject({ code: "invalid_parameter", param: "callback_url" });
    const metadata = await submit({ callback_url: "https://169.254.169.254/latest" });
    expect(metadata.body.error).toMatchObject({ code: "invalid_parameter", param: "callback_url" });
    const project = await api(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: { project: { type: "url", url: `${svc.url}/healthz` } },
    });
    expect(project.status).toBe(400);
    expect(project.body.error).toMatchObject({ code: "invalid_parameter", param: "project.url" });
  });

  it("refuses a callback or project URL the same way whether its host resolves or not, naming no kind of address", async () => {
    // localhost resolves (to 127.0.0.1), nothing-here.invalid does not, the others are literals.
    const hosts = ["localhost", "nothing-here.invalid", "127.0.0.1", "10.0.3.7", "169.254.169.254"];
    const answers = new Set<string>();
    for (const host of hosts) {
      const callback = await submit({ callback_url: `https://${host}/hook` });
      const project = await api(svc, "POST", "/v3/svc/renders", {
        key: svc.apiKey,
        body: { project: { type: "url", url: `https://${host}/project.zip` } },
      });
      for (const answer of [callback, project]) {
        expect(answer.status, host).toBe(400);
        const text = JSON.stringify(answer.body.error).replaceAll(host, "HOST");
        expect(text).not.toMatch(/resolv|private|loopback|link-local|ENOTFOUND|127\.|10\.|169\./i);
        answers.add(text);
      }
    }
    expect([...answers]).toEqual([
      JSON.stringify({
        code: "invalid_parameter",
        message: "callback_url refused: HOST is not a public address the service may reach",
        param: "callback_url",
      }),
      JSON.stringify({
        code: "invalid_parameter",
        message: "project.url refused: HOST is not a public address the service may reach",
        param: "project.url",
      }),
    ]);
  });

  it("answers 402 svc_insufficient_credits for an account without credits", async () => {
    const email = `broke-${Date.now()}@example.com`;
    expect((await runCli(["server", "users", "add", email, "--data-dir", svc.dataDir])).code).toBe(
      0,
    );
    const created = await runCli([
      "server",
      "keys",
      "create",
      "--user",
      email,
      "--data-dir",
      svc.dataDir,
    ]);
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^svc_key_/);
    const response = await api(svc, "POST", "/v3/svc/renders", {
      key,
      body: { project: { type: "asset_id", asset_id: assetId } },
    });
    expect(response.status).toBe(402);
    expect(response.body.error.code).toBe("svc_insufficient_credits");
    const other = await api(svc, "GET", `/v3/assets/${assetId}`, { key });
    expect(other.body.error.code).toBe("svc_asset_not_found");
    expect(
      (await runCli(["server", "credits", "add", email, "3", "--data-dir", svc.dataDir])).stdout,
    ).toContain("3 credits");
    const me = await api(svc, "GET", "/v3/users/me", { key });
    expect(me.body.data.billing.credits_remaining).toBe(3);
  });
});

describe("idempotency", () => {
  it("replays the first response for the same key and body", async () => {
    const key = `render-${Date.now()}`;
    const first = await submit({ fps: 12 }, svc.apiKey, { "idempotency-key": key });
    const second = await submit({ fps: 12 }, svc.apiKey, { "idempotency-key": key });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
  });

  it("answers 409 svc_idempotency_conflict for the same key with a different body", async () => {
    const key = `conflict-${Date.now()}`;
    expect((await submit({ fps: 12 }, svc.apiKey, { "idempotency-key": key })).status).toBe(201);
    const conflict = await submit({ fps: 13 }, svc.apiKey, { "idempotency-key": key });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe("svc_idempotency_conflict");
  });

  it("scopes keys per endpoint and replays asset creation too", async () => {
    const key = `shared-${Date.now()}`;
    const body = {
      filename: "p.zip",
      content_type: "application/zip",
      size_bytes: 10,
      checksum_sha256: "f".repeat(64),
    };
    const a = await api(svc, "POST", "/v3/assets", {
      key: svc.apiKey,
      body,
      headers: { "idempotency-key": key },
    });
    const b = await api(svc, "POST", "/v3/assets", {
      key: svc.apiKey,
      body,
      headers: { "idempotency-key": key },
    });
    expect(b.body.data.asset_id).toBe(a.body.data.asset_id);
    expect((await submit({}, svc.apiKey, { "idempotency-key": key })).status).toBe(201);
  });

  it("creates one render for concurrent requests carrying the same key", async () => {
    const key = `race-${Date.now()}`;
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => submit({ fps: 7 }, svc.apiKey, { "idempotency-key": key })),
    );
    const created = new Set(
      responses.filter((r) => r.status === 201).map((r) => r.body.data.render_id),
    );
    expect(created.size).toBe(1);
    for (const response of responses.filter((r) => r.status !== 201)) {
      expect(response.status).toBe(409);
      expect(response.body.error.code).toBe("svc_idempotency_conflict");
    }
    const replay = await submit({ fps: 7 }, svc.apiKey, { "idempotency-key": key });
    expect(replay.body.data.render_id).toBe([...created][0]);
  });

  it("refuses a malformed key", async () => {
    const response = await submit({}, svc.apiKey, { "idempotency-key": "has spaces!" });
    expect(response.body.error).toMatchObject({
      code: "invalid_parameter",
      param: "Idempotency-Key",
    });
  });
});

describe("list and delete", () => {
  it("pages 25 renders with limit 10 newest first, with no duplicates or gaps", async () => {
    const email = `lister-${Date.now()}@example.com`;
    await runCli(["server", "users", "add", email, "--credits", "100", "--data-dir", svc.dataDir]);
    const key = (
      await runCli(["server", "keys", "create", "--user", email, "--data-dir", svc.dataDir])
    ).stdout.trim();
    const zip = buildZip([{ name: "index.html", data: compositionHtml() }]);
    const { assetId: own } = await uploadProject(svc, key, zip);
    const created: string[] = [];
    for (let i = 0; i < 25; i++) {
      const response = await api(svc, "POST", "/v3/svc/renders", {
        key,
        body: { project: { type: "asset_id", asset_id: own }, title: `r${i}` },
      });
      created.push(response.body.data.render_id);
    }
    const seen: string[] = [];
    const pages: number[] = [];
    let token: string | null = null;
    do {
      const query: string = token ? `?limit=10&token=${encodeURIComponent(token)}` : "?limit=10";
      const page = await api(svc, "GET", `/v3/svc/renders${query}`, { key });
      expect(page.status).toBe(200);
      pages.push(page.body.data.length);
      seen.push(...page.body.data.map((r: { render_id: string }) => r.render_id));
      token = page.body.has_more ? page.body.next_token : null;
      if (!page.body.has_more) expect(page.body.next_token).toBeNull();
    } while (token);
    expect(pages).toEqual([10, 10, 5]);
    expect(seen).toEqual([...created].reverse());
    const bad = await api(svc, "GET", "/v3/svc/renders?limit=101", { key });
    expect(bad.body.error).toMatchObject({ code: "invalid_parameter", param: "limit" });
    expect((await api(svc, "GET", "/v3/svc/renders?limit=0", { key })).status).toBe(400);
    expect((await api(svc, "GET", "/v3/svc/renders?token=garbage", { key })).body.error.param).toBe(
      "token",
    );
    const defaults = await api(svc, "GET", "/v3/svc/renders", { key });
    expect(defaults.body.data).toHaveLength(10);
  });

  it("soft-deletes a render: later GET is 404 svc_render_not_found and the list hides it", async () => {
    const id = (await submit({ title: "to delete" })).body.data.render_id;
    const deleted = await api(svc, "DELETE", `/v3/svc/renders/${id}`, { key: svc.apiKey });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ render_id: id });
    const get = await api(svc, "GET", `/v3/svc/renders/${id}`, { key: svc.apiKey });
    expect(get.status).toBe(404);
    expect(get.body.error.code).toBe("svc_render_not_found");
    const list = await api(svc, "GET", "/v3/svc/renders?limit=100", { key: svc.apiKey });
    expect(list.body.data.map((r: { render_id: string }) => r.render_id)).not.toContain(id);
    expect((await api(svc, "DELETE", `/v3/svc/renders/${id}`, { key: svc.apiKey })).status).toBe(
      404,
    );
  });
});

describe("rate limit", () => {
  it("answers 429 with Retry-After once a credential exceeds its rate", async () => {
    const limited = await startService({
      jobs: 0,
      env: { SVC_SERVER_RATE_LIMIT_PER_MINUTE: "5" },
    });
    try {
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let i = 0; i < 7; i++) {
        const response = await api(limited, "GET", "/v3/users/me", { key: limited.apiKey });
        statuses.push(response.status);
        if (response.status === 429) {
          retryAfter = response.headers.get("retry-after");
          expect(response.body.error.code).toBe("rate_limit_exceeded");
        }
      }
      expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
      expect(statuses.slice(5)).toEqual([429, 429]);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    } finally {
      await limited.kill();
    }
  });
});

describe("wire format", () => {
  it("answers with exactly the shapes of the shared zod schemas the CLI and the app parse", async () => {
    const zip = buildZip([{ name: "index.html", data: compositionHtml({ seconds: 3 }) }]);
    const created = await api(svc, "POST", "/v3/assets", {
      key: svc.apiKey,
      body: {
        filename: "w.zip",
        content_type: "application/zip",
        size_bytes: zip.length,
        checksum_sha256: sha256(zip),
      },
    });
    dataEnvelope(createAssetResponseSchema).strict().parse(created.body);
    await fetch(created.body.data.upload_url, {
      method: "PUT",
      headers: created.body.data.upload_headers,
      body: new Uint8Array(zip),
    });
    const id = created.body.data.asset_id;
    dataEnvelope(completeAssetResponseSchema).parse(
      (await api(svc, "POST", `/v3/assets/${id}/complete`, { key: svc.apiKey })).body,
    );
    dataEnvelope(assetRecordSchema).parse(
      (await api(svc, "GET", `/v3/assets/${id}`, { key: svc.apiKey })).body,
    );
    const submitted = await api(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: { project: { type: "asset_id", asset_id: id } },
    });
    dataEnvelope(submitRenderResponseSchema).parse(submitted.body);
    const record = await api(svc, "GET", `/v3/svc/renders/${submitted.body.data.render_id}`, {
      key: svc.apiKey,
    });
    expect(Object.keys(renderRecordSchema.strict().parse(record.body.data)).sort()).toEqual(
      [
        "render_id",
        "status",
        "progress",
        "title",
        "fps",
        "quality",
        "format",
        "resolution",
        "aspect_ratio",
        "composition",
        "duration",
        "credits_charged",
        "created_at",
        "started_at",
        "completed_at",
        "video_url",
        "thumbnail_url",
        "failure_code",
        "failure_message",
        "callback_id",
        "warnings",
        "asset_id",
        "variables",
        "strict_variables",
        // Issue 25: every record lists its outputs (one for a render without `outputs`).
        "outputs",
        // Issue 42: the CDN libraries the render used, from the npm registry (empty until it ran).
        "libraries",
      ].sort(),
    );
    renderListSchema.parse(
      (await api(svc, "GET", "/v3/svc/renders?limit=3", { key: svc.apiKey })).body,
    );
    dataEnvelope(userRecordSchema).parse(
      (await api(svc, "GET", "/v3/users/me", { key: svc.apiKey })).body,
    );
  });
});

/** Bytes of every file under `dir`. */
async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}
