// The API's OpenAPI document: what the service serves is what docs/openapi.json holds (run
// `npm run openapi` after changing a schema), every error code is in it with its status, and
// every operation it lists exists on the real service.
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_ERRORS } from "../../shared/api";
import { startService, type ServiceProcess } from "../testing/service-process";

interface Document {
  paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
}

let svc: ServiceProcess;
let served: Document;

beforeAll(async () => {
  svc = await startService({ jobs: 0 });
  const response = await fetch(`${svc.url}/v3/openapi.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  served = (await response.json()) as Document;
});

afterAll(async () => {
  await svc?.kill();
});

describe("the OpenAPI document", () => {
  it("is served without a key and equals docs/openapi.json (npm run openapi rewrites it)", async () => {
    const checkedIn = JSON.parse(
      await readFile(new URL("../../../docs/openapi.json", import.meta.url), "utf8"),
    ) as unknown;
    expect(served).toEqual(checkedIn);
  });

  it("lists every error code of API_ERRORS under its status", () => {
    const seen = new Map<string, Set<string>>();
    for (const methods of Object.values(served.paths)) {
      for (const operation of Object.values(methods)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          for (const code of response.description.split(", ")) {
            seen.set(code, (seen.get(code) ?? new Set()).add(status));
          }
        }
      }
    }
    // Unknown routes, and the signed upload/download URLs (not /v3 operations), are listed only
    // in x-error-codes.
    const outsideOperations = ["not_found", "forbidden", "range_not_satisfiable"];
    expect((served as unknown as Record<string, unknown>)["x-error-codes"]).toEqual(API_ERRORS);
    for (const [code, status] of Object.entries(API_ERRORS)) {
      if (outsideOperations.includes(code)) continue;
      expect([...(seen.get(code) ?? [])], code).toEqual([String(status)]);
    }
  });

  it("describes only operations the service has: each answers with its own refusal, not an unknown route", async () => {
    for (const [path, methods] of Object.entries(served.paths)) {
      for (const method of Object.keys(methods)) {
        const url = `${svc.url}${path.replace("{id}", "xyz_doesNotExist")}`;
        const response = await fetch(url, {
          method: method.toUpperCase(),
          headers: { "x-api-key": svc.apiKey, "content-type": "application/json" },
        });
        const body = (await response.json()) as { error?: { code: string } };
        expect(body.error?.code, `${method} ${path}`).not.toBe("not_found");
        const statuses = Object.keys(methods[method]!.responses);
        expect(statuses, `${method} ${path} answered ${response.status}`).toContain(
          String(response.status),
        );
      }
    }
  });
});
