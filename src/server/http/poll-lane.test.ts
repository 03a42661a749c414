// The poll lane answers a poll as fastify's path does: the same body, status, headers, metrics and
// log line (a real service process, real SQLite, the shared rate limit on), for API keys and
// signed-in users' access tokens; and an answer kept from an earlier poll is never one a write
// has made stale. A poll with a query
// string always goes through fastify, which gives the two answers to compare.
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CANCELLED_FAILURE_CODE } from "../../shared/api";
import { buildZip, compositionHtml } from "../testing/zip-builder";
import {
  api,
  startService,
  uploadProject,
  type ApiResponse,
  type ServiceProcess,
} from "../testing/service-process";
import { addUserWithPassword, tokensThroughPages } from "../testing/sign-in";

let svc: ServiceProcess;
let renderId: string;
let assetId: string;

beforeAll(async () => {
  svc = await startService({
    jobs: 0,
    env: { SVC_SERVER_RATE_LIMIT_PER_MINUTE: "1000", SVC_SERVER_TRUSTED_PROXIES: "127.0.0.1" },
  });
  const zip = buildZip([{ name: "index.html", data: compositionHtml(), deflate: true }]);
  ({ assetId } = await uploadProject(svc, svc.apiKey, zip));
  const submitted = await api<{ data: { render_id: string } }>(svc, "POST", "/v3/svc/renders", {
    key: svc.apiKey,
    body: { project: { type: "asset_id", asset_id: assetId }, title: 'Lane \u00e9 "quoted"' },
  });
  expect(submitted.status).toBe(201);
  renderId = submitted.body.data.render_id;
});

afterAll(async () => {
  await svc?.kill();
});

async function laneAnswers(): Promise<number> {
  const response = await fetch(`${svc.url}/metrics`);
  const line = (await response.text())
    .split("\n")
    .find((text) => text.startsWith("svc_http_poll_lane_total"));
  return Number(line?.slice(line.lastIndexOf(" ") + 1) ?? Number.NaN);
}

/** Header names and the values that must be equal on both paths. */
function comparable(response: ApiResponse) {
  const names = [...response.headers.keys()].filter((name) => name !== "date").sort();
  return {
    status: response.status,
    body: response.body,
    names,
    type: response.headers.get("content-type"),
    limit: response.headers.get("x-ratelimit-limit"),
  };
}

describe("the poll lane", () => {
  it("answers a cached key's poll as fastify does, counted in the metrics", async () => {
    const before = await laneAnswers();
    const viaFastify = await api(svc, "GET", `/v3/svc/renders/${renderId}?via=fastify`, {
      key: svc.apiKey,
    });
    const viaLane = await api(svc, "GET", `/v3/svc/renders/${renderId}`, { key: svc.apiKey });
    expect(await laneAnswers()).toBe(before + 1);
    expect(comparable(viaLane)).toEqual(comparable(viaFastify));
    expect(viaLane.status).toBe(200);
    expect(viaLane.headers.get("x-ratelimit-limit")).toBe("1000");
    // Both counted once in the same shared window.
    expect(Number(viaLane.headers.get("x-ratelimit-remaining"))).toBe(
      Number(viaFastify.headers.get("x-ratelimit-remaining")) - 1,
    );
    const requests = await (await fetch(`${svc.url}/metrics`)).text();
    expect(requests).toMatch(
      /svc_http_requests_total\{method="GET",route="\/v3\/svc\/renders\/:id",status="200"[^}]*\} [1-9]/,
    );
  });

  it("answers an unknown render with fastify's 404 envelope", async () => {
    const before = await laneAnswers();
    const viaFastify = await api(svc, "GET", "/v3/svc/renders/rnd_missing?via=fastify", {
      key: svc.apiKey,
    });
    const viaLane = await api(svc, "GET", "/v3/svc/renders/rnd_missing", { key: svc.apiKey });
    expect(await laneAnswers()).toBe(before + 1);
    expect(viaLane.status).toBe(404);
    expect(comparable(viaLane)).toEqual(comparable(viaFastify));
  });

  it("writes fastify's log line, under the caller's request id", async () => {
    const before = await laneAnswers();
    const viaLane = await api(svc, "GET", `/v3/svc/renders/${renderId}`, {
      key: svc.apiKey,
      headers: { "x-request-id": "lb-request-lane", "x-forwarded-for": "203.0.113.7" },
    });
    await api(svc, "GET", `/v3/svc/renders/${renderId}?via=fastify`, {
      key: svc.apiKey,
      headers: { "x-request-id": "lb-request-fastify", "x-forwarded-for": "203.0.113.7" },
    });
    expect(await laneAnswers()).toBe(before + 1);
    expect(viaLane.headers.get("x-request-id")).toBe("lb-request-lane");
    // Log lines are written asynchronously (the lane's in batches): they arrive soon after.
    const lineOf = (requestId: string) =>
      svc
        .logs()
        .split("\n")
        .find((entry) => entry.includes(`"reqId":"${requestId}"`) && entry.includes("completed"));
    await expect.poll(() => lineOf("lb-request-lane")).toBeDefined();
    await expect.poll(() => lineOf("lb-request-fastify")).toBeDefined();
    const lane = JSON.parse(lineOf("lb-request-lane")!) as Record<string, unknown>;
    const fastify = JSON.parse(lineOf("lb-request-fastify")!) as Record<string, unknown>;
    expect(lane).toMatchObject({
      level: 30,
      reqId: "lb-request-lane",
      req: { method: "GET", url: `/v3/svc/renders/${renderId}`, remoteAddress: "203.0.113.7" },
      res: { statusCode: 200 },
      msg: "request completed",
    });
    const shape = (line: Record<string, unknown>) => ({
      ...line,
      time: typeof line.time,
      reqId: typeof line.reqId,
      responseTime: typeof line.responseTime,
      req: { ...(line.req as object), url: "" },
    });
    expect(Object.keys(lane)).toEqual(Object.keys(fastify));
    expect(shape(lane)).toEqual(shape(fastify));
    // The client's address as a trusted proxy (here loopback) forwarded it, on both paths.
    // The key never reaches the log.
    expect(svc.logs()).not.toContain(svc.apiKey);
  });

  it("answers a signed-in user's poll once their access token is cached", async () => {
    await addUserWithPassword(svc.dataDir, "lane@example.com", "lane-password-1");
    const tokens = await tokensThroughPages(svc.url, "lane@example.com", "lane-password-1");
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    const before = await laneAnswers();
    // Another user's render is not found, for this token as for any other credential.
    const first = await api(svc, "GET", `/v3/svc/renders/${renderId}`, { headers: bearer });
    const second = await api(svc, "GET", `/v3/svc/renders/${renderId}`, { headers: bearer });
    expect([first.status, second.status]).toEqual([404, 404]);
    expect(comparable(second)).toEqual(comparable(first));
    // The first authenticated the token through fastify's path; the second took the lane.
    expect(await laneAnswers()).toBe(before + 1);
  });

  it("answers afresh once anything is written: by this process or by another", async () => {
    const submitted = await api<{ data: { render_id: string } }>(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: { project: { type: "asset_id", asset_id: assetId }, title: "One" },
    });
    const id = submitted.body.data.render_id;
    type Polled = { data: { title: string; status: string; failure_code: string | null } };
    const poll = async () =>
      (await api<Polled>(svc, "GET", `/v3/svc/renders/${id}`, { key: svc.apiKey })).body.data;
    const before = await laneAnswers();
    expect(await poll()).toMatchObject({ title: "One", status: "queued" });
    expect(await poll()).toMatchObject({ title: "One", status: "queued" });
    // Another process commits (here the test's own connection to the service's database).
    const sqlite = new BetterSqlite3(join(svc.dataDir, "svc.db"));
    try {
      sqlite.prepare("update renders set title = 'Two' where id = ?").run(id);
    } finally {
      sqlite.close();
    }
    // Seen within 10 ms (SQLite's data_version is read at most that often).
    await expect.poll(poll).toMatchObject({ title: "Two", status: "queued" });
    // This process commits, and the very next poll sees it (a cancel through the API).
    const cancelled = await api(svc, "POST", `/v3/svc/renders/${id}/cancel`, { key: svc.apiKey });
    expect(cancelled.status).toBe(200);
    expect(await poll()).toMatchObject({
      title: "Two",
      status: "failed",
      failure_code: CANCELLED_FAILURE_CODE,
    });
    expect(await laneAnswers()).toBeGreaterThanOrEqual(before + 4);
  });

  it("leaves a credential it has not accepted to fastify", async () => {
    const before = await laneAnswers();
    const wrong = await api(svc, "GET", `/v3/svc/renders/${renderId}`, { key: "svc_nokey" });
    expect(wrong.status).toBe(401);
    const token = await api(svc, "GET", `/v3/svc/renders/${renderId}`, {
      headers: { authorization: "Bearer svc_at_notatoken" },
    });
    expect(token.status).toBe(401);
    expect(token.headers.get("www-authenticate")).toContain("invalid_token");
    expect(await laneAnswers()).toBe(before);
  });
});
