// Processes of the scale-out shape starting at the same moment on an empty PostgreSQL, as a first
// `kubectl apply` (or a rollout with a new migration) starts the api and its workers: each makes
// the tables and pg-boss's schema and queues if they are not there, and they must not trip over
// each other (they once did: pg-boss's queue creation deadlocked one worker, whose process then
// hung instead of exiting). And a process whose start fails exits non-zero, so an orchestrator
// starts it again. Real processes (`svc server`), the project's PostgreSQL and S3 store.
import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import pg from "pg";
import { inject } from "vitest";
import { afterAll, describe, expect, it } from "vitest";
import { startService, tempDir, type ServiceProcess } from "./testing/service-process";
import { s3ServiceEnv } from "./testing/s3-server";

const BIN = resolve(import.meta.dirname, "../../bin/svc.js");
const started: ServiceProcess[] = [];

async function emptyDatabase(name: string): Promise<string> {
  const server = inject("postgresServer");
  const client = new pg.Client({ connectionString: `${server}postgres` });
  await client.connect();
  try {
    await client.query(`drop database if exists ${name} with (force)`);
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  return `${server}${name}`;
}

afterAll(async () => {
  await Promise.all(started.map((svc) => svc.kill("SIGKILL")));
});

describe("processes starting together on an empty database", () => {
  it(
    "an api and three workers all start, and the schema is made once",
    { timeout: 300_000 },
    async () => {
      const databaseUrl = await emptyDatabase("svc_start_together");
      const dir = await tempDir("svc-start-together-");
      const store = inject("s3Server");
      // Workers without a render slot: the race is in the start, before any render, and a
      // browser per process would only slow the test down.
      const roles = [
        ["--role", "api"],
        ["--role", "worker", "--jobs", "0"],
        ["--role", "worker", "--jobs", "0"],
        ["--role", "worker", "--jobs", "0"],
      ];
      const results = await Promise.allSettled(
        roles.map((serverArgs, index) =>
          startService({
            dataDir: join(dir, `process-${index}`),
            storage: store,
            s3Prefix: "start-together",
            databaseUrl,
            serverArgs,
            // No local account: several processes would race to make the same one.
            env: { SVC_SERVER_LOCAL_ACCOUNT: "" },
            // Four Node processes starting at once on a busy 2-core machine.
            startTimeoutMs: 240_000,
          }),
        ),
      );
      for (const result of results) if (result.status === "fulfilled") started.push(result.value);
      const failures = results.flatMap((result) =>
        result.status === "rejected" ? [String(result.reason)] : [],
      );
      expect(failures).toEqual([]);

      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        const migrations = await client.query<{ name: string; count: string }>(
          "select name, count(*) from kysely_migration group by name having count(*) > 1",
        );
        expect(migrations.rows).toEqual([]);
        const queues = await client.query<{ name: string }>(
          "select name from pgboss.queue where name like 'svc-%' order by name",
        );
        expect(queues.rows.map((row) => row.name)).toEqual(["svc-render", "svc-render-dead"]);
      } finally {
        await client.end();
      }
      for (const svc of started) {
        const health = await fetch(`${svc.url}/healthz`);
        expect(health.status).toBe(200);
      }
    },
  );

  it("a worker whose start fails exits non-zero, saying why", async () => {
    const store = inject("s3Server");
    // A database that is not there: the start fails after the process is up.
    const databaseUrl = `${inject("postgresServer")}svc_no_such_database`;
    const dir = await tempDir("svc-start-fails-");
    const child = spawn(
      process.execPath,
      [BIN, "server", "--role", "worker", "--port", "0", "--data-dir", join(dir, "data")],
      {
        env: {
          ...process.env,
          ...s3ServiceEnv(store, "start-fails"),
          SVC_DATABASE_URL: databaseUrl,
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolveExit) =>
      child.once("exit", (exitCode) => resolveExit(exitCode)),
    );
    expect(code).toBe(1);
    expect(stderr).toMatch(/svc server: .*svc_no_such_database/);
  });
});
