// The failed-credential throttle and the device-code limit against the real service, as the
// attacker of issue 41 tried them (2,700 random keys from one client in a few seconds): each
// client is a loopback address of its own (Linux answers all of 127/8). Default limits: 30
// failures per client, 10 per key prefix, 20 device codes per client. Runs on SQLite here and on
// PostgreSQL in the scale-out project; shared-limits.test.ts holds it across two processes.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { api, startService, type ServiceProcess } from "./testing/service-process";

const PER_CLIENT = 30;
const PER_PREFIX = 10;
const DEVICE_CODES = 20;

let svc: ServiceProcess;

beforeAll(async () => {
  svc = await startService({ jobs: 0 });
});

afterAll(async () => {
  await svc?.kill();
});

function wrongKey(prefix = randomBytes(3).toString("base64url")): string {
  return `svc_key_${prefix}${randomBytes(30).toString("base64url")}`;
}

it("answers 2,700 wrong keys from one client with 401 up to the limit, then 429 with Retry-After; the right key from another client still works", async () => {
  const keys = Array.from({ length: 2700 }, () => wrongKey());
  const statuses: number[] = [];
  let retryAfter = 0;
  let message = "";
  const send = async (key: string) => {
    const answer = await api(svc, "GET", "/v3/users/me", { key });
    if (answer.status === 429) {
      retryAfter = Number(answer.headers.get("retry-after"));
      message = answer.body.error.message;
      expect(answer.body.error.code).toBe("rate_limit_exceeded");
    }
    return answer.status;
  };
  // One at a time past the limit, then as fast as a client can (20 in flight), as the attacker.
  for (const key of keys.slice(0, PER_CLIENT + 10)) statuses.push(await send(key));
  for (let i = PER_CLIENT + 10; i < keys.length; i += 20) {
    statuses.push(...(await Promise.all(keys.slice(i, i + 20).map(send))));
  }
  expect(statuses.slice(0, PER_CLIENT)).toEqual(Array(PER_CLIENT).fill(401));
  expect(statuses.slice(PER_CLIENT)).toEqual(Array(2700 - PER_CLIENT).fill(429));
  // The window is 10 minutes.
  expect(retryAfter).toBeGreaterThan(500);
  expect(retryAfter).toBeLessThanOrEqual(600);
  expect(message).toMatch(/too many failed credentials from this address; retry in \d+ s/);

  // The right key from the throttled client is refused without being looked up; from another
  // client it works.
  expect((await api(svc, "GET", "/v3/users/me", { key: svc.apiKey })).status).toBe(429);
  const other = await api(svc, "GET", "/v3/users/me", { key: svc.apiKey, from: "127.0.0.2" });
  expect(other.status).toBe(200);
  expect(other.body.data.email).toBe("local@localhost");
  // A client cannot step around its count by naming another address (no proxy is trusted).
  const spoofed = await api(svc, "GET", "/v3/users/me", {
    key: wrongKey(),
    headers: { "x-forwarded-for": "203.0.113.9" },
  });
  expect(spoofed.status).toBe(429);
  // An access token is a credential too.
  const token = await api(svc, "GET", "/v3/users/me", {
    headers: { authorization: `Bearer svc_at_${randomBytes(32).toString("base64url")}` },
  });
  expect(token.status).toBe(429);

  // No key reaches the log.
  const log = svc.logs();
  expect(log).toContain("remoteAddress");
  for (const key of keys) expect(log.includes(key.slice(8))).toBe(false);
});

it("refuses keys of one prefix from every client once the prefix had its failures", async () => {
  const statuses: number[] = [];
  for (let i = 0; i < PER_PREFIX + 2; i++) {
    // A new client for each attempt: the per-client limit is never reached.
    const from = `127.0.1.${i + 1}`;
    statuses.push((await api(svc, "GET", "/v3/users/me", { key: wrongKey("AbCd"), from })).status);
  }
  expect(statuses).toEqual([...Array(PER_PREFIX).fill(401), 429, 429]);
  const refused = await api(svc, "GET", "/v3/users/me", {
    key: wrongKey("AbCd"),
    from: "127.0.1.99",
  });
  expect(refused.body.error.message).toMatch(/keys that start like this one, from any address/);
  // Another prefix from the same fresh client is looked up (and is wrong).
  const other = await api(svc, "GET", "/v3/users/me", {
    key: wrongKey("WxYz"),
    from: "127.0.1.99",
  });
  expect(other.status).toBe(401);
});

it("throttles refused OAuth grants per client: invalid_grant up to the limit, then 429 temporarily_unavailable", async () => {
  const from = "127.0.2.1";
  const statuses: string[] = [];
  let retryAfter = 0;
  for (let i = 0; i < PER_CLIENT + 2; i++) {
    const answer = await api(svc, "POST", "/v1/oauth/token", {
      from,
      form: {
        grant_type: "refresh_token",
        client_id: "svc-cli",
        refresh_token: `svc_rt_${randomBytes(32).toString("base64url")}`,
      },
    });
    statuses.push(`${answer.status} ${answer.body.error}`);
    if (answer.status === 429) retryAfter = Number(answer.headers.get("retry-after"));
  }
  expect(statuses).toEqual([
    ...Array(PER_CLIENT).fill("400 invalid_grant"),
    "429 temporarily_unavailable",
    "429 temporarily_unavailable",
  ]);
  expect(retryAfter).toBeGreaterThan(500);
});

it("limits device-code creation per client, with Retry-After; another client still gets codes", async () => {
  const create = (from: string) =>
    api(svc, "POST", "/v1/oauth/device/code", { from, form: { client_id: "svc-cli" } });
  const statuses: number[] = [];
  let refused;
  for (let i = 0; i < DEVICE_CODES + 3; i++) {
    const answer = await create("127.0.3.1");
    statuses.push(answer.status);
    if (answer.status === 429) refused = answer;
  }
  expect(statuses).toEqual([...Array(DEVICE_CODES).fill(200), 429, 429, 429]);
  expect(refused!.body).toMatchObject({ error: "temporarily_unavailable" });
  expect(refused!.body.error_description).toMatch(/too many device codes from this address/);
  // The codes live 10 minutes: so does the window.
  expect(Number(refused!.headers.get("retry-after"))).toBeGreaterThan(500);
  const other = await create("127.0.3.2");
  expect(other.status).toBe(200);
  expect(other.body.device_code).toEqual(expect.any(String));
});

it("behind a trusted load balancer counts the client its X-Forwarded-For names", async () => {
  const balanced = await startService({
    jobs: 0,
    env: { SVC_SERVER_TRUSTED_PROXIES: "127.0.0.1", SVC_SERVER_AUTH_FAILURES_PER_CLIENT: "3" },
  });
  try {
    const from = (client: string, key: string) =>
      api(balanced, "GET", "/v3/users/me", { key, headers: { "x-forwarded-for": client } });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await from("203.0.113.7", wrongKey())).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    // Another client behind the same balancer is not throttled.
    expect((await from("203.0.113.8", balanced.apiKey)).status).toBe(200);
  } finally {
    await balanced.kill();
  }
});
