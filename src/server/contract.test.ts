// Contract tests driven by the OpenAPI document the service serves: for every operation and every
// status it documents, a request that produces it against the real service, whose answer has the
// documented shape (the success schema, or an error code listed under that status). Then the
// edges clients hit: bodiless requests with and without a JSON content-type, unknown fields
// (ignored), wrong types (400 naming the param), a huge body (413) and malformed JSON (400), and
// unknown paths (404 JSON). API-only services (jobs: 0): nothing here needs a render.
import { request } from "node:http";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiErrorEnvelopeSchema } from "../shared/api";
import { OPERATIONS, type OperationId } from "./http/operations";
import {
  api,
  sha256,
  startService,
  uploadProject,
  type ApiResponse,
  type Json,
  type ServiceProcess,
} from "./testing/service-process";
import { buildZip, compositionHtml } from "./testing/zip-builder";

interface DocumentedResponse {
  content: { "application/json": { schema: Json } };
}
interface Document {
  paths: Record<
    string,
    Record<string, { operationId: OperationId; responses: Record<string, DocumentedResponse> }>
  >;
}

/**
 * Statuses every operation documents that no request can cause on a healthy service: 500 is a
 * bug (the one error mapper in http/app.ts answers it), 503 comes while it shuts down.
 */
const NOT_PRODUCIBLE = ["500", "503"];

const variables = [{ id: "size", type: "number", label: "Size", default: 1, min: 0, max: 5 }];
const projectZip = buildZip([{ name: "index.html", data: compositionHtml({ variables }) }]);

let svc: ServiceProcess;
/** Rate limit 1 per minute and no credits: 429 for every operation, 402 for a render. */
let poor: ServiceProcess;
let document: Document;
let assetId: string;
let pendingAssetId: string;
let renderId: string;

const assetBody = (extra: Record<string, unknown> = {}) => ({
  filename: "project.zip",
  content_type: "application/zip",
  size_bytes: projectZip.length,
  checksum_sha256: sha256(projectZip),
  ...extra,
});
const key = () => ({ key: svc.apiKey });
const renderBody = (extra: Record<string, unknown> = {}) => ({
  project: { type: "asset_id", asset_id: assetId },
  ...extra,
});

/** Both services, so afterAll stops the one that started when the other did not. */
let starting: Promise<ServiceProcess>[] = [];

beforeAll(async () => {
  starting = [
    startService({ jobs: 0, env: { SVC_SERVER_RATE_LIMIT_PER_MINUTE: "0" } }),
    startService({
      jobs: 0,
      env: { SVC_SERVER_RATE_LIMIT_PER_MINUTE: "1", SVC_SERVER_LOCAL_CREDITS: "0" },
    }),
  ];
  [svc, poor] = (await Promise.all(starting)) as [ServiceProcess, ServiceProcess];
  const served = await fetch(`${svc.url}/v3/openapi.json`);
  document = (await served.json()) as Document;
  const uploaded = await uploadProject(svc, svc.apiKey, projectZip);
  expect(uploaded.complete.status).toBe(200);
  assetId = uploaded.assetId;
  pendingAssetId = (await api(svc, "POST", "/v3/assets", { ...key(), body: assetBody() })).body.data
    .asset_id;
  renderId = (await api(svc, "POST", "/v3/svc/renders", { ...key(), body: renderBody() })).body.data
    .render_id;
});

afterAll(async () => {
  const started = await Promise.allSettled(starting);
  await Promise.all(started.map((s) => (s.status === "fulfilled" ? s.value.kill() : undefined)));
});

type Case = () => Promise<ApiResponse>;

function createAssetCases(path: string): Record<string, Case> {
  return {
    201: () => api(svc, "POST", path, { ...key(), body: assetBody() }),
    400: () => api(svc, "POST", path, { ...key(), body: assetBody({ size_bytes: "10" }) }),
    401: () => api(svc, "POST", path, { body: assetBody() }),
    409: async () => {
      const headers = { "idempotency-key": `contract${path.replace(/\W/g, "_")}` };
      await api(svc, "POST", path, { ...key(), headers, body: assetBody() });
      return api(svc, "POST", path, { ...key(), headers, body: assetBody({ filename: "b.zip" }) });
    },
    413: () =>
      api(svc, "POST", path, {
        ...key(),
        body: assetBody({ size_bytes: 200 * 1024 * 1024 + 1 }),
      }),
  };
}

/** The request that produces each documented status, by operation. */
const CASES: Record<OperationId, Record<string, Case>> = {
  createAsset: createAssetCases("/v3/assets"),
  createDirectUpload: createAssetCases("/v3/assets/direct-uploads"),
  completeAsset: {
    200: () => api(svc, "POST", `/v3/assets/${assetId}/complete`, key()),
    401: () => api(svc, "POST", `/v3/assets/${assetId}/complete`),
    404: () => api(svc, "POST", "/v3/assets/asst_nope/complete", key()),
    409: () => api(svc, "POST", `/v3/assets/${pendingAssetId}/complete`, key()),
    422: async () => {
      const garbage = Buffer.from("not a zip at all");
      const created = await api(svc, "POST", "/v3/assets", {
        ...key(),
        body: assetBody({ size_bytes: garbage.length, checksum_sha256: null }),
      });
      await fetch(created.body.data.upload_url, { method: "PUT", body: garbage });
      return api(svc, "POST", `/v3/assets/${created.body.data.asset_id}/complete`, key());
    },
  },
  getAsset: {
    200: () => api(svc, "GET", `/v3/assets/${assetId}`, key()),
    401: () => api(svc, "GET", `/v3/assets/${assetId}`),
    404: () => api(svc, "GET", "/v3/assets/asst_nope", key()),
  },
  getAssetComposition: {
    200: () => api(svc, "GET", `/v3/svc/assets/${assetId}/composition`, key()),
    400: () => api(svc, "GET", `/v3/svc/assets/${assetId}/composition?composition=`, key()),
    401: () => api(svc, "GET", `/v3/svc/assets/${assetId}/composition`),
    404: () => api(svc, "GET", "/v3/svc/assets/asst_nope/composition", key()),
    409: () => api(svc, "GET", `/v3/svc/assets/${pendingAssetId}/composition`, key()),
    422: () =>
      api(svc, "GET", `/v3/svc/assets/${assetId}/composition?composition=missing.html`, key()),
  },
  submitRender: {
    201: () => api(svc, "POST", "/v3/svc/renders", { ...key(), body: renderBody() }),
    400: () => api(svc, "POST", "/v3/svc/renders", { ...key(), body: renderBody({ fps: "30" }) }),
    401: () => api(svc, "POST", "/v3/svc/renders", { body: renderBody() }),
    402: () => api(poor, "POST", "/v3/svc/renders", { key: poor.apiKey, body: renderBody() }),
    404: () =>
      api(svc, "POST", "/v3/svc/renders", {
        ...key(),
        body: { project: { type: "asset_id", asset_id: "asst_nope" } },
      }),
    409: () =>
      api(svc, "POST", "/v3/svc/renders", {
        ...key(),
        body: { project: { type: "asset_id", asset_id: pendingAssetId } },
      }),
    413: () =>
      api(svc, "POST", "/v3/svc/renders", {
        ...key(),
        body: renderBody({ variables: { blob: "x".repeat(1024 * 1024) } }),
      }),
    422: () =>
      api(svc, "POST", "/v3/svc/renders", {
        ...key(),
        body: renderBody({ variables: { size: "huge" } }),
      }),
  },
  quoteRender: {
    200: () =>
      api(svc, "POST", "/v3/svc/renders/quote", { ...key(), body: { duration: 2, fps: 10 } }),
    400: () => api(svc, "POST", "/v3/svc/renders/quote", { ...key(), body: { duration: -1 } }),
    401: () => api(svc, "POST", "/v3/svc/renders/quote", { body: { duration: 2 } }),
  },
  getRender: {
    200: () => api(svc, "GET", `/v3/svc/renders/${renderId}`, key()),
    401: () => api(svc, "GET", `/v3/svc/renders/${renderId}`),
    404: () => api(svc, "GET", "/v3/svc/renders/rndr_nope", key()),
  },
  listRenders: {
    200: () => api(svc, "GET", "/v3/svc/renders?limit=2", key()),
    400: () => api(svc, "GET", "/v3/svc/renders?limit=0", key()),
    401: () => api(svc, "GET", "/v3/svc/renders"),
  },
  cancelRender: {
    200: async () => {
      const created = await api(svc, "POST", "/v3/svc/renders", { ...key(), body: renderBody() });
      return api(svc, "POST", `/v3/svc/renders/${created.body.data.render_id}/cancel`, key());
    },
    401: () => api(svc, "POST", `/v3/svc/renders/${renderId}/cancel`),
    404: () => api(svc, "POST", "/v3/svc/renders/rndr_nope/cancel", key()),
    409: async () => {
      // No workers here: the render is marked completed as a worker would (cancel.test.ts renders one).
      const created = await api(svc, "POST", "/v3/svc/renders", { ...key(), body: renderBody() });
      const db = new BetterSqlite3(join(svc.dataDir, "svc.db"));
      try {
        db.prepare("update renders set status = 'completed' where id = ?").run(
          created.body.data.render_id,
        );
      } finally {
        db.close();
      }
      return api(svc, "POST", `/v3/svc/renders/${created.body.data.render_id}/cancel`, key());
    },
  },
  deleteRender: {
    200: async () => {
      const created = await api(svc, "POST", "/v3/svc/renders", { ...key(), body: renderBody() });
      return api(svc, "DELETE", `/v3/svc/renders/${created.body.data.render_id}`, key());
    },
    401: () => api(svc, "DELETE", `/v3/svc/renders/${renderId}`),
    404: () => api(svc, "DELETE", "/v3/svc/renders/rndr_nope", key()),
  },
  getMe: {
    200: () => api(svc, "GET", "/v3/users/me", key()),
    401: () => api(svc, "GET", "/v3/users/me"),
  },
};

const documentedCodes = (response: DocumentedResponse): string[] =>
  response.content["application/json"].schema.allOf[1].properties.error.properties.code.enum;

const operations = () =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method, ...operation })),
  );

describe("every documented status of every operation", () => {
  it("has a request here, and no request here answers an undocumented status", () => {
    const documented = operations().map(({ operationId, responses }) => [
      operationId,
      Object.keys(responses).filter(
        (status) => !NOT_PRODUCIBLE.includes(status) && status !== "429",
      ),
    ]);
    const covered = Object.entries(CASES).map(([operationId, cases]) => [
      operationId,
      Object.keys(cases),
    ]);
    expect(Object.fromEntries(covered)).toEqual(Object.fromEntries(documented));
    expect(Object.keys(CASES).sort()).toEqual(Object.keys(OPERATIONS).sort());
  });

  it("produces each status with the documented shape", async () => {
    for (const { operationId, method, path, responses } of operations()) {
      for (const [status, produce] of Object.entries(CASES[operationId])) {
        const answer = await produce();
        const what = `${method.toUpperCase()} ${path} -> ${status}: ${JSON.stringify(answer.body).slice(0, 300)}`;
        expect(answer.status, what).toBe(Number(status));
        expect(answer.headers.get("content-type"), what).toMatch(/^application\/json/);
        if (Number(status) < 300) {
          OPERATIONS[operationId].success.schema.parse(answer.body);
        } else {
          const { error } = apiErrorEnvelopeSchema.parse(answer.body);
          expect(documentedCodes(responses[status]!), what).toContain(error.code);
        }
      }
    }
  });

  it("answers 429 rate_limit_exceeded with Retry-After for every operation once the credential's allowance is spent", async () => {
    await api(poor, "GET", "/v3/users/me", { key: poor.apiKey });
    for (const { operationId, method, path, responses } of operations()) {
      const answer = await api(poor, method.toUpperCase(), path.replace("{id}", "x"), {
        key: poor.apiKey,
        ...(OPERATIONS[operationId].method === "POST" ? { body: {} } : {}),
      });
      expect(answer.status, `${method} ${path}`).toBe(429);
      expect(answer.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(documentedCodes(responses["429"]!)).toContain(answer.body.error.code);
    }
  });
});

describe("the edges of the request surface", () => {
  it("takes bodiless requests with and without a JSON content-type", async () => {
    for (const headers of [{}, { "content-type": "application/json" }] as Record<
      string,
      string
    >[]) {
      for (const [method, path] of [
        ["GET", `/v3/svc/renders/${renderId}`],
        ["GET", "/v3/users/me"],
        ["POST", `/v3/assets/${assetId}/complete`],
      ] as const) {
        const response = await fetch(`${svc.url}${path}`, {
          method,
          headers: { "x-api-key": svc.apiKey, ...headers },
        });
        expect(response.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(200);
      }
      const created = await api(svc, "POST", "/v3/svc/renders", { ...key(), body: renderBody() });
      const deleted = await fetch(`${svc.url}/v3/svc/renders/${created.body.data.render_id}`, {
        method: "DELETE",
        headers: { "x-api-key": svc.apiKey, ...headers },
      });
      expect(deleted.status).toBe(200);
    }
  });

  it("ignores fields it does not know, in bodies and queries", async () => {
    const asset = await api(svc, "POST", "/v3/assets", {
      ...key(),
      body: assetBody({ metadata: { team: "a" }, extra: 1 }),
    });
    expect(asset.status).toBe(201);
    const render = await api(svc, "POST", "/v3/svc/renders", {
      ...key(),
      body: renderBody({
        webhook_version: 2,
        project: { type: "asset_id", asset_id: assetId, x: 1 },
      }),
    });
    expect(render.status).toBe(201);
    const record = await api(svc, "GET", `/v3/svc/renders/${render.body.data.render_id}`, key());
    expect(record.body.data).not.toHaveProperty("webhook_version");
    const list = await api(svc, "GET", "/v3/svc/renders?limit=1&expand=everything", key());
    expect(list.status).toBe(200);
  });

  it("refuses a wrong type with 400 invalid_parameter naming the field", async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ["/v3/assets", assetBody({ size_bytes: "10" }), "size_bytes"],
      ["/v3/assets", assetBody({ filename: 7 }), "filename"],
      ["/v3/svc/renders", renderBody({ fps: "30" }), "fps"],
      ["/v3/svc/renders", renderBody({ strict_variables: "yes" }), "strict_variables"],
      ["/v3/svc/renders", renderBody({ variables: [1] }), "variables"],
      ["/v3/svc/renders", { project: { type: "asset_id", asset_id: 5 } }, "project.asset_id"],
    ];
    for (const [path, body, param] of cases) {
      const response = await api(svc, "POST", path, { ...key(), body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error).toMatchObject({ code: "invalid_parameter", param });
    }
    const array = await fetch(`${svc.url}/v3/svc/renders`, {
      method: "POST",
      headers: { "x-api-key": svc.apiKey, "content-type": "application/json" },
      body: "[1,2]",
    });
    expect(array.status).toBe(400);
  });

  it("refuses a body over 1 MiB with 413 and malformed JSON with 400, as JSON errors", async () => {
    const huge = await postUnread(
      `${svc.url}/v3/assets`,
      { "x-api-key": svc.apiKey, "content-type": "application/json" },
      JSON.stringify(assetBody({ filename: "x".repeat(2 * 1024 * 1024) })),
    );
    expect(huge.status).toBe(413);
    expect((JSON.parse(huge.text) as Json).error.code).toBe("request_too_large");
    for (const body of ['{"project": ', "{'a': 1}", "nul", '{"a":1}}']) {
      const malformed = await fetch(`${svc.url}/v3/svc/renders`, {
        method: "POST",
        headers: { "x-api-key": svc.apiKey, "content-type": "application/json" },
        body,
      });
      expect(malformed.status, body).toBe(400);
      expect(((await malformed.json()) as Json).error.code).toBe("invalid_parameter");
    }
  });

  it("answers unknown paths and methods with 404 not_found as JSON, never HTML", async () => {
    for (const [method, path] of [
      ["GET", "/"],
      ["GET", "/v3/nope"],
      ["GET", "/v3/svc/renders/a/b"],
      ["PUT", "/v3/svc/renders"],
      ["PATCH", `/v3/svc/renders/${renderId}`],
      ["GET", "/index.html"],
    ] as const) {
      const response = await fetch(`${svc.url}${path}`, {
        method,
        headers: { "x-api-key": svc.apiKey, accept: "text/html" },
      });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      expect(((await response.json()) as Json).error.code).toBe("not_found");
    }
  });
});

/**
 * POSTs a body the service refuses by its declared length alone: the headers and the first 64 KiB
 * go out, and the answer is read before the rest would be sent. Sending it all races the service's
 * close of the connection (EPIPE, or a reset that loses the answer): not what is tested here.
 */
function postUnread(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(
      url,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      },
      (res) => {
        answered = true;
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, text });
          req.destroy();
        });
        res.on("error", reject);
      },
    );
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    req.write(body.slice(0, 64 * 1024));
  });
}
