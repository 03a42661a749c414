// Requests that existing clients of this API shape send, exactly as they send them (SPEC.md
// section 4): a JSON content-type on bodiless requests, no checksum on asset creation, variable
// variables checks by type, and what they read from the answers. Real service process, real HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { completeAssetResponseSchema, dataEnvelope } from "../shared/api";
import { buildZip, compositionHtml } from "./testing/zip-builder";
import {
  api,
  sha256,
  startService,
  uploadProject,
  type Json,
  type ServiceProcess,
} from "./testing/service-process";

const JSON_TYPE = { "content-type": "application/json" };
const variables = [
  { id: "title", type: "string", label: "Title", default: "Hello" },
  { id: "size", type: "number", label: "Size", default: 1, min: 0, max: 5 },
  {
    id: "plate",
    type: "enum",
    label: "Plate",
    default: "dark",
    options: [{ value: "dark", label: "Dark" }],
  },
];
const projectZip = buildZip([
  { name: "index.html", data: compositionHtml({ variables }), deflate: true },
]);

let svc: ServiceProcess;
let assetId: string;

beforeAll(async () => {
  svc = await startService({ jobs: 0 });
  const uploaded = await uploadProject(svc, svc.apiKey, projectZip);
  expect(uploaded.complete.status).toBe(200);
  assetId = uploaded.assetId;
});

afterAll(async () => {
  await svc?.kill();
});

/** The same request without a body, with the JSON content-type many clients always send. */
async function bodiless(method: string, path: string) {
  const response = await fetch(`${svc.url}${path}`, {
    method,
    headers: { "x-api-key": svc.apiKey, ...JSON_TYPE },
  });
  return { status: response.status, body: (await response.json()) as Json };
}

const submit = (body: Record<string, unknown>) =>
  api(svc, "POST", "/v3/svc/renders", {
    key: svc.apiKey,
    body: { project: { type: "asset_id", asset_id: assetId }, ...body },
  });

describe("requests existing clients send", () => {
  it("accepts GET and DELETE with content-type application/json and no body", async () => {
    const created = await submit({});
    expect(created.status).toBe(201);
    const renderId = created.body.data.render_id as string;
    const got = await bodiless("GET", `/v3/svc/renders/${renderId}`);
    expect(got.status).toBe(200);
    expect(got.body.data.render_id).toBe(renderId);
    const deleted = await bodiless("DELETE", `/v3/svc/renders/${renderId}`);
    expect(deleted).toEqual({ status: 200, body: { data: { render_id: renderId } } });
    expect((await bodiless("GET", `/v3/svc/renders/${renderId}`)).body.error.code).toBe(
      "svc_render_not_found",
    );
  });

  it("still refuses malformed JSON with 400 invalid_parameter", async () => {
    const response = await fetch(`${svc.url}/v3/svc/renders`, {
      method: "POST",
      headers: { "x-api-key": svc.apiKey, ...JSON_TYPE },
      body: '{"project": ',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).error.code).toBe("invalid_parameter");
  });

  for (const checksum of [null, undefined]) {
    it(`creates an asset with checksum_sha256 ${String(checksum)}, computes it at a bodiless complete, and answers mime_type and a signed url`, async () => {
      const created = await api(svc, "POST", "/v3/assets", {
        key: svc.apiKey,
        body: {
          filename: "project.zip",
          content_type: "application/zip",
          size_bytes: projectZip.length,
          ...(checksum === null ? { checksum_sha256: null } : {}),
        },
      });
      expect(created.status).toBe(201);
      const { asset_id: id, upload_url: uploadUrl } = created.body.data;
      const early = await bodiless("POST", `/v3/assets/${id}/complete`);
      expect(early.status).toBe(409);
      expect(early.body.error.code).toBe("svc_upload_not_found");
      const put = await fetch(uploadUrl, {
        method: "PUT",
        headers: { "content-type": "application/zip" },
        body: new Uint8Array(projectZip),
      });
      expect(put.status).toBeLessThan(300);
      const completed = await bodiless("POST", `/v3/assets/${id}/complete`);
      expect(completed.status).toBe(200);
      const answer = dataEnvelope(completeAssetResponseSchema).parse(completed.body).data;
      expect(answer).toMatchObject({ status: "ready", mime_type: "application/zip" });
      const zip = await fetch(answer.url);
      expect(zip.status).toBe(200);
      expect(sha256(Buffer.from(await zip.arrayBuffer()))).toBe(sha256(projectZip));
      const record = await api(svc, "GET", `/v3/assets/${id}`, { key: svc.apiKey });
      expect(record.body.data.checksum_sha256).toBe(sha256(projectZip));
    });
  }

  it("refuses a wrong type, enum value or range with 422 even without strict_variables", async () => {
    for (const values of [{ size: "huge" }, { plate: "neon" }, { size: 9 }, { title: 5 }]) {
      const response = await submit({ variables: values });
      expect(response.status, JSON.stringify(values)).toBe(422);
      expect(response.body.error).toMatchObject({
        code: "svc_project_invalid",
        param: "variables",
      });
    }
  });

  it("takes an undeclared key without strict_variables with a warning on the record, and refuses it with", async () => {
    const created = await submit({ variables: { nope: 1, title: "Hi" } });
    expect(created.status).toBe(201);
    const record = await api(svc, "GET", `/v3/svc/renders/${created.body.data.render_id}`, {
      key: svc.apiKey,
    });
    expect(record.body.data.warnings).toEqual([
      {
        code: "undeclared_variable",
        message: "nope is not declared by the composition; it is passed to the page as given",
        param: "variables.nope",
      },
    ]);
    const clean = await submit({ variables: { title: "Hi" } });
    const cleanRecord = await api(svc, "GET", `/v3/svc/renders/${clean.body.data.render_id}`, {
      key: svc.apiKey,
    });
    expect(cleanRecord.body.data.warnings).toEqual([]);
    expect((await submit({ variables: { nope: 1 }, strict_variables: true })).status).toBe(422);
  });
});
