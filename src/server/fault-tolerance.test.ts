// Fault tolerance with the real service process: SIGKILL mid-render and start again on the same
// data dir -> the render completes exactly once and is charged once; renders queued across a
// restart all complete; SIGTERM lets a running render finish before the process exits.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  api,
  startService,
  tempDir,
  uploadProject,
  type ServiceProcess,
} from "./testing/service-process";
import { buildZip, compositionHtml } from "./testing/zip-builder";
import { waitFor } from "../shared/testing/wait-for";

const env = { SVC_SERVER_LEASE_SECONDS: "3" };
let dataDir: string;
let svc: ServiceProcess | undefined;

beforeAll(async () => {
  dataDir = join(await tempDir(), "data");
});
afterAll(async () => {
  await svc?.kill("SIGKILL");
});

function readDb<T>(query: string, ...params: unknown[]): T[] {
  const db = new BetterSqlite3(join(dataDir, "svc.db"), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(query).all(...params) as T[];
  } finally {
    db.close();
  }
}

async function record(service: ServiceProcess, renderId: string) {
  return (await api(service, "GET", `/v3/svc/renders/${renderId}`, { key: service.apiKey })).body
    .data;
}

async function submit(
  service: ServiceProcess,
  assetId: string,
  body: Record<string, unknown> = {},
): Promise<string> {
  const response = await api(service, "POST", "/v3/svc/renders", {
    key: service.apiKey,
    body: { project: { type: "asset_id", asset_id: assetId }, fps: 5, quality: "draft", ...body },
  });
  expect(response.status).toBe(201);
  return response.body.data.render_id;
}

describe("fault tolerance", () => {
  it("completes a render exactly once, charged once, after the service is SIGKILLed mid-render", async () => {
    svc = await startService({ dataDir, jobs: 1, env });
    const zip = buildZip([
      { name: "index.html", data: compositionHtml({ seconds: 5 }), deflate: true },
    ]);
    const { assetId } = await uploadProject(svc, svc.apiKey, zip);
    const renderId = await submit(svc, assetId, { fps: 10 });
    await waitFor(
      "the render to be capturing",
      async () => {
        const current = await record(svc!, renderId);
        return current.status === "rendering" && current.progress > 0 ? current : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    await svc.kill("SIGKILL");
    expect(
      readDb<{ status: string }>("select status from renders where id = ?", renderId)[0]!.status,
    ).toBe("rendering");

    svc = await startService({ dataDir, jobs: 1, env });
    const done = await waitFor(
      "the render to complete after the restart",
      async () => {
        const current = await record(svc!, renderId);
        return current.status === "completed" || current.status === "failed" ? current : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200 },
    );
    expect(done).toMatchObject({ status: "completed", duration: 5, credits_charged: 5 });
    const me = await api(svc, "GET", "/v3/users/me", { key: svc.apiKey });
    expect(me.body.data.billing.credits_used).toBe(5);
    const job = readDb<{ attempts: number; state: string }>(
      "select attempts, state from jobs where id = ?",
      renderId,
    )[0]!;
    expect(job).toEqual({ attempts: 2, state: "done" });
    const userId = readDb<{ user_id: string }>(
      "select user_id from renders where id = ?",
      renderId,
    )[0]!.user_id;
    const attemptsWithFiles = await readdir(join(dataDir, "objects", "renders", userId, renderId));
    expect(attemptsWithFiles).toEqual(["2"]);
    expect((await fetch(done.video_url)).status).toBe(200);
  });

  it("fails a render whose worker died on its last attempt with svc_worker_lost, charging nothing", async () => {
    const lastDir = join(await tempDir(), "data");
    const lastEnv = { ...env, SVC_SERVER_MAX_ATTEMPTS: "1" };
    let service = await startService({ dataDir: lastDir, jobs: 1, env: lastEnv });
    try {
      const zip = buildZip([{ name: "index.html", data: compositionHtml({ seconds: 5 }) }]);
      const { assetId } = await uploadProject(service, service.apiKey, zip);
      const renderId = await submit(service, assetId, { fps: 10 });
      await waitFor(
        "the render to start",
        async () => ((await record(service, renderId)).status === "rendering" ? true : undefined),
        { timeoutMs: 60_000, intervalMs: 50 },
      );
      await service.kill("SIGKILL");
      service = await startService({ dataDir: lastDir, jobs: 1, env: lastEnv });
      const failed = await waitFor(
        "the render to be given up",
        async () => {
          const current = await record(service, renderId);
          return current.status === "rendering" || current.status === "queued"
            ? undefined
            : current;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      expect(failed).toMatchObject({
        status: "failed",
        failure_code: "svc_worker_lost",
        credits_charged: 0,
      });
      const me = await api(service, "GET", "/v3/users/me", { key: service.apiKey });
      expect(me.body.data.billing.credits_used).toBe(0);
    } finally {
      await service.kill("SIGKILL");
    }
  });

  it("completes all of 5 renders queued across a restart", async () => {
    const zip = buildZip([{ name: "index.html", data: compositionHtml({ seconds: 1 }) }]);
    const { assetId } = await uploadProject(svc!, svc!.apiKey, zip);
    const before = (await api(svc!, "GET", "/v3/users/me", { key: svc!.apiKey })).body.data.billing
      .credits_used;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await submit(svc!, assetId, { title: `queued ${i}` }));
    await svc!.kill("SIGKILL");

    svc = await startService({ dataDir, jobs: 1, env });
    const finished = await waitFor(
      "all five renders",
      async () => {
        const records = await Promise.all(ids.map((id) => record(svc!, id)));
        return records.every((r) => r.status === "completed" || r.status === "failed")
          ? records
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    expect(finished.map((r) => r.status)).toEqual(Array(5).fill("completed"));
    const after = (await api(svc, "GET", "/v3/users/me", { key: svc.apiKey })).body.data.billing
      .credits_used;
    expect(after - before).toBe(5);
  });

  it("lets a running render finish on SIGTERM before exiting, refusing requests meanwhile with 503", async () => {
    const zip = buildZip([{ name: "index.html", data: compositionHtml({ seconds: 2 }) }]);
    const { assetId } = await uploadProject(svc!, svc!.apiKey, zip);
    const renderId = await submit(svc!, assetId);
    await waitFor(
      "the render to start",
      async () => ((await record(svc!, renderId)).status === "rendering" ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 50,
      },
    );
    const stopped = svc!.kill("SIGTERM");
    await waitFor("the shutdown to begin", async () =>
      svc!.stdout().includes("svc server stopping (SIGTERM)") ? true : undefined,
    );
    // While the render finishes, requests are refused in the error envelope, with a retry hint.
    const refused = await api(svc!, "GET", "/v3/users/me", { key: svc!.apiKey });
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe("service_unavailable");
    expect(refused.headers.get("retry-after")).toBe("1");
    await stopped;
    expect(
      readDb<{ status: string }>("select status from renders where id = ?", renderId)[0]!.status,
    ).toBe("completed");
    svc = undefined;
  });

  it("fails a render that runs past the per-render timeout, without charging it", async () => {
    const limited = await startService({
      jobs: 1,
      env: { SVC_SERVER_RENDER_TIMEOUT_SECONDS: "1" },
    });
    try {
      const zip = buildZip([{ name: "index.html", data: compositionHtml({ seconds: 20 }) }]);
      const { assetId } = await uploadProject(limited, limited.apiKey, zip);
      const renderId = await submit(limited, assetId, { fps: 30 });
      const done = await waitFor(
        "the render to time out",
        async () => {
          const current = await record(limited, renderId);
          return current.status === "completed" || current.status === "failed"
            ? current
            : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      expect(done).toMatchObject({
        status: "failed",
        failure_code: "svc_render_timeout",
        credits_charged: 0,
      });
      const me = await api(limited, "GET", "/v3/users/me", { key: limited.apiKey });
      expect(me.body.data.billing.credits_used).toBe(0);
    } finally {
      await limited.kill();
    }
  });

  it("gives a running render back to the queue when the shutdown grace period runs out", async () => {
    const quick = await startService({
      jobs: 1,
      env: { SVC_SERVER_SHUTDOWN_GRACE_SECONDS: "0" },
    });
    const zip = buildZip([{ name: "index.html", data: compositionHtml({ seconds: 30 }) }]);
    const { assetId } = await uploadProject(quick, quick.apiKey, zip);
    const renderId = await submit(quick, assetId, { fps: 30 });
    await waitFor(
      "the render to start",
      async () => ((await record(quick, renderId)).status === "rendering" ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 50,
      },
    );
    await quick.kill("SIGTERM");
    const db = new BetterSqlite3(join(quick.dataDir, "svc.db"), { readonly: true });
    try {
      expect(
        db.prepare("select state, attempts, lease_token from jobs where id = ?").get(renderId),
      ).toEqual({
        state: "queued",
        attempts: 0,
        lease_token: null,
      });
      expect(db.prepare("select status from renders where id = ?").get(renderId)).toEqual({
        status: "queued",
      });
    } finally {
      db.close();
    }
  });
});
