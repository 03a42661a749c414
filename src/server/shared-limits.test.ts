// Limits that hold across API processes on one PostgreSQL (the scale-out shape behind a load
// balancer): the per-credential rate limit is counted in the database, so the request over it is
// 429 whichever process answers; so are failed credentials (issue 41); and the per-account cap on
// renders in progress keeps the extra renders queued (held) until the account is under it,
// whichever process took them.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createApiKey } from "./auth/accounts";
import { openPostgresDatabase } from "./db/postgres";
import {
  api,
  queryServiceDatabase,
  startService,
  suiteDatabase,
  tempDir,
  uploadProject,
  waitForTerminalRender,
  type ServiceProcess,
} from "./testing/service-process";
import { buildZip, compositionHtml } from "./testing/zip-builder";
import { FormBrowser } from "./testing/sign-in";
import { waitFor } from "../shared/testing/wait-for";

const RATE = 8;
const FAILURES = 6;
let first: ServiceProcess;
let second: ServiceProcess;
/** A second key of the account, spent by the rate-limit test (the renders use the first). */
let key: string;
/** A third key, for the failed-key test's right key. */
let third: string;

beforeAll(async () => {
  const dir = await tempDir();
  const dataDir = join(dir, "api-1", "data");
  // Both processes use the first one's database and objects.
  const databaseUrl = await suiteDatabase(dataDir);
  const shared = {
    databaseUrl: databaseUrl!,
    s3Prefix: `svc-test/shared-limits-${Date.now()}`,
    env: {
      SVC_SERVER_RATE_LIMIT_PER_MINUTE: String(RATE),
      SVC_SERVER_MAX_RENDERS_PER_ACCOUNT: "1",
      SVC_SERVER_MAX_CHUNKS: "1",
      SVC_SERVER_AUTH_FAILURES_PER_CLIENT: String(FAILURES),
    },
  };
  // The first migrates the database and makes the account; it renders too (one worker).
  first = await startService({ ...shared, dataDir, jobs: 1 });
  second = await startService({
    ...shared,
    dataDir: join(dir, "api-2", "data"),
    serverArgs: ["--role", "api"],
  });
  const db = await openPostgresDatabase(databaseUrl!);
  try {
    const user = await db.selectFrom("users").select("id").executeTakeFirstOrThrow();
    key = await createApiKey(db, user.id);
    third = await createApiKey(db, user.id);
  } finally {
    await db.destroy();
  }
});

afterAll(async () => {
  await Promise.all([first?.kill(), second?.kill()]);
});

it("holds the rate limit across both API processes: the request over it is 429 on either", async () => {
  const statuses: string[] = [];
  for (let i = 0; i < RATE + 2; i++) {
    const service = i % 2 === 0 ? first : second;
    const answer = await api(service, "GET", "/v3/users/me", { key });
    statuses.push(`${service === first ? "A" : "B"}${answer.status}`);
    if (answer.status === 429) {
      expect(answer.body.error.code).toBe("rate_limit_exceeded");
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
  }
  // RATE requests pass in total, not RATE per process; then both refuse.
  expect(statuses).toEqual([
    ...Array.from({ length: RATE }, (_, i) => `${i % 2 === 0 ? "A" : "B"}200`),
    "A429",
    "B429",
  ]);
});

it("holds the failed-key throttle across both API processes: the limit in total, then 429 on either; another client still gets in", async () => {
  const statuses: string[] = [];
  for (let i = 0; i < FAILURES + 4; i++) {
    const service = i % 2 === 0 ? first : second;
    const wrong = `svc_key_${randomBytes(32).toString("base64url")}`;
    const answer = await api(service, "GET", "/v3/users/me", { key: wrong, from: "127.0.4.1" });
    statuses.push(`${service === first ? "A" : "B"}${answer.status}`);
    if (answer.status === 429) {
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
  }
  expect(statuses).toEqual([
    ...Array.from({ length: FAILURES }, (_, i) => `${i % 2 === 0 ? "A" : "B"}401`),
    "A429",
    "B429",
    "A429",
    "B429",
  ]);
  for (const service of [first, second]) {
    const answer = await api(service, "GET", "/v3/users/me", { key: third, from: "127.0.4.2" });
    expect(answer.status).toBe(200);
  }
});

it("holds the sign-in page's lockout across both API processes: five wrong passwords in total, then 429 on either", async () => {
  const browsers = [new FormBrowser(first.url), new FormBrowser(second.url)];
  const fields = await Promise.all(
    browsers.map(async (browser) => FormBrowser.formFields((await browser.get("/device")).html)),
  );
  const email = `locked-${Date.now()}@example.com`;
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 7; attempt++) {
    const on = attempt % 2;
    const answer = await browsers[on]!.post("/oauth/signin", {
      ...fields[on],
      email,
      password: "not-the-password",
    });
    statuses.push(answer.status);
  }
  expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
});

it("keeps an account's renders beyond its cap queued until one finishes, whichever process took them", async () => {
  const zip = buildZip([{ name: "index.html", data: compositionHtml({ seconds: 1 }) }]);
  const { assetId } = await uploadProject(first, first.apiKey, zip);
  const ids: string[] = [];
  for (const service of [first, second, second]) {
    const answer = await api(service, "POST", "/v3/svc/renders", {
      key: first.apiKey,
      body: { project: { type: "asset_id", asset_id: assetId }, fps: 4, quality: "draft" },
    });
    expect(answer.status).toBe(201);
    ids.push(answer.body.data.render_id);
  }
  const rows = () =>
    queryServiceDatabase<{ id: string; status: string; held: number }>(
      first.dataDir,
      `select id, status, held from renders where id in (?, ?, ?)`,
      ids,
    );
  const inProgress = (list: { status: string; held: number }[]) =>
    list.filter((row) => ["queued", "rendering"].includes(row.status) && Number(row.held) === 0)
      .length;
  const atSubmit = await rows();
  expect(atSubmit.filter((row) => Number(row.held) === 1)).toHaveLength(2);
  // Until all three are done, never more than one is in progress; the held ones stay queued.
  const seen = new Set<number>();
  await waitFor(
    "all three renders",
    async () => {
      const now = await rows();
      const progressing = inProgress(now);
      seen.add(progressing);
      expect(progressing).toBeLessThanOrEqual(1);
      for (const row of now.filter((r) => Number(r.held) === 1)) expect(row.status).toBe("queued");
      return now.every((row) => row.status === "completed") ? true : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 100 },
  );
  expect(seen.has(1)).toBe(true);
  for (const id of ids) expect((await waitForTerminalRender(first, id)).status).toBe("completed");
}, 240_000);
