// Test support: runs the real service as a child process (`node bin/svc.js server --port 0`),
// reads the bound URL from its stdout, and offers plain-HTTP helpers. No mocks: tests talk to
// it over loopback exactly as clients do, and can SIGKILL it and start it again on the same dir.
// Storage is the data dir, or an S3-compatible store: the one given, or in the "scale-out" test
// project (SVC_TEST_STORAGE=s3) the project's Swift; objects go under a prefix named after the
// data dir, so a service started again on the same dir finds its objects. Likewise the database
// is SQLite in the data dir, or (SVC_TEST_DATABASE=postgres) a database of the project's
// PostgreSQL named after the data dir. A multi-host test gives the database, the object prefix, a
// command prefix (another network namespace) and more server flags (role, address) itself.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
// Type only: loading undici installs its Agent as the process-wide fetch dispatcher (its
// global.js), which refuses a body sent with its own content-length header (an S3 upload URL's).
// It is loaded when a request must leave from another address (`from`).
import type { Agent } from "undici";
import { startHttpsReceiver, type Receiver } from "./https-receiver";
import { s3ServiceEnv, type S3Coordinates } from "./s3-server";
import { waitFor } from "../../shared/testing/wait-for";

const REPO = resolve(import.meta.dirname, "../../..");
const BIN = join(REPO, "bin/svc.js");

export interface ServiceProcess {
  url: string;
  dataDir: string;
  /** The local account's key; "" for a process that made no local account (a worker). */
  apiKey: string;
  webhookSecret: string;
  /** The S3 store and prefix this service keeps its objects in; undefined for the data dir. */
  s3: (S3Coordinates & { prefix: string }) | undefined;
  /** What every signed object URL of this service starts with. */
  storageUrl: string;
  child: ChildProcess;
  /** Everything the process wrote to stderr (its log) so far. */
  logs(): string;
  stdout(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * `svc server`'s flag for the queue jobs a process runs at once: `--jobs`, or `--workers` in a
 * checkout from before it was renamed (bench/api.ts --baseline runs such a one).
 */
async function jobsFlag(root: string): Promise<string> {
  if (root === REPO) return "--jobs";
  const cli = await readFile(join(root, "src/cli/server.ts"), "utf8").catch(() => "");
  return cli.includes('"--jobs <n>"') || !cli.includes('"--workers <n>"') ? "--jobs" : "--workers";
}

export async function tempDir(prefix = "svc-server-test-"): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** The "s3" test project's store (vitest.config.ts), or undefined elsewhere. */
export async function suiteS3Store(): Promise<S3Coordinates | undefined> {
  if (process.env.SVC_TEST_STORAGE !== "s3") return undefined;
  const { inject } = await import("vitest");
  return inject("s3Server");
}

/** The scale-out project's PostgreSQL database for a data dir (made on first use), if any. */
export async function suiteDatabase(dataDir: string): Promise<string | undefined> {
  if (process.env.SVC_TEST_DATABASE !== "postgres") return undefined;
  const { inject } = await import("vitest");
  const server = inject("postgresServer");
  const name = `svc_${createHash("sha256").update(resolve(dataDir)).digest("hex").slice(0, 16)}`;
  const client = new pg.Client({ connectionString: `${server}postgres` });
  await client.connect();
  try {
    await client.query(`create database ${name}`).catch((error: { code?: string }) => {
      if (error.code !== "42P04") throw error; // exists: a restart on the same data dir
    });
  } finally {
    await client.end();
  }
  return `${server}${name}`;
}

/**
 * Rows of a read-only query on the database of the service with this data dir: SQLite in the dir,
 * or its PostgreSQL database in the "scale-out" project. Placeholders are `?`.
 */
export async function queryServiceDatabase<T>(
  dataDir: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const url = await suiteDatabase(dataDir);
  if (!url) {
    const db = new BetterSqlite3(join(dataDir, "svc.db"), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all(...params) as T[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    let n = 0;
    return (
      await client.query(
        sql.replace(/\?/g, () => `$${++n}`),
        params,
      )
    ).rows as T[];
  } finally {
    await client.end();
  }
}

export async function startService(
  options: {
    dataDir?: string;
    jobs?: number;
    env?: Record<string, string>;
    /** Default: the test project's choice (suiteS3Store), else the data dir. */
    storage?: S3Coordinates | "local";
    /** Another checkout to run the service from (bench/api.ts --baseline). */
    root?: string;
    /** Read the log and throw it away (a benchmark's millions of lines). */
    discardLogs?: boolean;
    /** Node flags for the service process, e.g. `--cpu-prof`. */
    nodeArgs?: string[];
    /** Objects under this prefix instead of one named after the data dir (services sharing a bucket). */
    s3Prefix?: string;
    /** This PostgreSQL database instead of the test project's (with the local account). */
    databaseUrl?: string;
    /** Runs the service through this command, e.g. `ip netns exec <ns>` (another host). */
    commandPrefix?: string[];
    /** More `svc server` flags, e.g. `--role worker --host 10.0.0.2 --port 8000`. */
    serverArgs?: string[];
    /** How long to wait for it to listen (default 60 s); several starting at once take longer. */
    startTimeoutMs?: number;
  } = {},
): Promise<ServiceProcess> {
  const dataDir = options.dataDir ?? join(await tempDir(), "data");
  const root = options.root ? resolve(options.root) : REPO;
  const store =
    options.storage === "local" ? undefined : (options.storage ?? (await suiteS3Store()));
  const s3 = store && {
    ...store,
    prefix:
      options.s3Prefix ??
      `svc-test/${basename(dirname(dataDir))}/${basename(dataDir)}`.replace(
        /[^A-Za-z0-9_./-]/g,
        "-",
      ),
  };
  const databaseUrl = options.databaseUrl ?? (store ? await suiteDatabase(dataDir) : undefined);
  const args = [
    ...(options.nodeArgs ?? []),
    join(root, "bin/svc.js"),
    "server",
    "--port",
    "0",
    "--data-dir",
    dataDir,
    await jobsFlag(root),
    String(options.jobs ?? 0),
    ...(options.serverArgs ?? []),
  ];
  const [command, ...commandArgs] = [...(options.commandPrefix ?? []), process.execPath, ...args];
  const child = spawn(command!, commandArgs, {
    cwd: root,
    env: {
      ...process.env,
      SVC_SERVER_LOG_LEVEL: "info",
      ...(s3 ? s3ServiceEnv(s3, s3.prefix) : { SVC_STORAGE_URL: "" }),
      ...(databaseUrl
        ? { SVC_DATABASE_URL: databaseUrl, SVC_SERVER_LOCAL_ACCOUNT: "1" }
        : { SVC_DATABASE_URL: "" }),
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    if (options.discardLogs) return;
    stderr += chunk;
    if (stderr.length > 4_000_000) stderr = stderr.slice(-2_000_000);
  });
  const exited = new Promise<void>((resolveExit) => child.once("exit", () => resolveExit()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timeoutMs = options.startTimeoutMs ?? 60_000;
    const deadline = setTimeout(
      () =>
        reject(
          new Error(
            `service did not start in ${timeoutMs / 1000} s:\n${stdout}\n${stderr.slice(-3000)}`,
          ),
        ),
      timeoutMs,
    );
    const check = () => {
      const match = /svc server listening on (http:\/\/\S+)/.exec(stdout);
      if (match) {
        clearTimeout(deadline);
        child.stdout!.off("data", check);
        resolveUrl(match[1]!);
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(deadline);
      reject(
        new Error(
          `service exited with ${code} before listening:\n${stdout}\n${stderr.slice(-3000)}`,
        ),
      );
    });
  });
  const credentials = (await readFile(join(dataDir, "credentials"), "utf8").then(
    JSON.parse,
    (error: NodeJS.ErrnoException) => {
      // A process of the scale-out shape without the local account has no credentials file.
      if (error.code === "ENOENT" && databaseUrl) return { api_key: "", webhook_secret: "" };
      throw error;
    },
  )) as { api_key: string; webhook_secret: string };
  return {
    url,
    dataDir,
    apiKey: credentials.api_key,
    webhookSecret: credentials.webhook_secret,
    s3,
    storageUrl: s3 ? `${s3.endpoint}/${s3.bucket}/${s3.prefix}/` : `${url}/storage/`,
    child,
    logs: () => stderr,
    stdout: () => stdout,
    async kill(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/**
 * The webhook tests' set-up: a new temp dir holding a local HTTPS receiver and the data dir of a
 * service (started with `options`) that trusts the receiver's certificate, may call its private
 * address and retries a failed delivery after 200 ms. The caller stops both (kill, close).
 */
export async function startServiceWithReceiver(
  options: Omit<Parameters<typeof startService>[0] & object, "dataDir"> = {},
): Promise<{ svc: ServiceProcess; receiver: Receiver; dir: string }> {
  const dir = await tempDir();
  const receiver = await startHttpsReceiver(dir);
  try {
    // The receiver's certificate added to the ones this process already trusts (a machine whose
    // HTTPS goes through a proxy with its own CA): the service still reaches the npm registry.
    const trusted = join(dir, "trusted-certs.pem");
    const inherited = process.env.NODE_EXTRA_CA_CERTS
      ? await readFile(process.env.NODE_EXTRA_CA_CERTS, "utf8").catch(() => "")
      : "";
    await writeFile(trusted, `${inherited}\n${await readFile(receiver.certFile, "utf8")}`);
    const svc = await startService({
      ...options,
      dataDir: join(dir, "data"),
      env: {
        NODE_EXTRA_CA_CERTS: trusted,
        SVC_SERVER_ALLOW_PRIVATE_TARGETS: "1",
        SVC_SERVER_WEBHOOK_BACKOFF_MS: "200",
        ...options.env,
      },
    });
    return { svc, receiver, dir };
  } catch (error) {
    await receiver.close();
    throw error;
  }
}

/** Parsed JSON of a response; the tests' expectations check its shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface ApiResponse<T = Json> {
  status: number;
  headers: Headers;
  body: T;
}

export async function api<T = Json>(
  service: { url: string },
  method: string,
  path: string,
  options: {
    key?: string | null;
    body?: unknown;
    /** A form body (the OAuth endpoints), instead of `body`. */
    form?: Record<string, string>;
    headers?: Record<string, string>;
    /** Another client: the loopback address the request leaves from, e.g. "127.0.0.2". */
    from?: string;
  } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers["x-api-key"] = options.key;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (options.form) headers["content-type"] = "application/x-www-form-urlencoded";
  const payload = options.form
    ? new URLSearchParams(options.form).toString()
    : options.body === undefined
      ? undefined
      : JSON.stringify(options.body);
  const response = options.from
    ? ((await (
        await import("undici")
      ).fetch(`${service.url}${path}`, {
        method,
        headers,
        body: payload,
        dispatcher: await clientAgent(options.from),
      })) as unknown as Response)
    : await fetch(`${service.url}${path}`, { method, headers, body: payload });
  const text = await response.text();
  let body: Json = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, body };
}

const clientAgents = new Map<string, Agent>();

/** Connections from one loopback address (Linux answers all of 127/8): another client's. */
async function clientAgent(localAddress: string): Promise<Agent> {
  let agent = clientAgents.get(localAddress);
  if (!agent) {
    const { Agent } = await import("undici");
    agent = new Agent({ localAddress });
    clientAgents.set(localAddress, agent);
  }
  return agent;
}

export function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** create -> PUT -> complete. Returns the complete response (status + body). */
export async function uploadProject(
  service: { url: string },
  key: string,
  zip: Buffer,
  overrides: { checksum?: string; sizeBytes?: number } = {},
): Promise<{ assetId: string; complete: ApiResponse }> {
  const created = await api(service, "POST", "/v3/assets", {
    key,
    body: {
      filename: "project.zip",
      content_type: "application/zip",
      size_bytes: overrides.sizeBytes ?? zip.length,
      checksum_sha256: overrides.checksum ?? sha256(zip),
    },
  });
  if (created.status !== 201)
    throw new Error(`create asset: ${created.status} ${JSON.stringify(created.body)}`);
  // fetch sets content-length from the body; the URL's own header beside it would be a second one.
  const { "content-length": _length, ...uploadHeaders } = created.body.data.upload_headers;
  const put = await fetch(created.body.data.upload_url, {
    method: "PUT",
    headers: uploadHeaders,
    body: new Uint8Array(zip),
  });
  if (put.status !== 200) throw new Error(`PUT: ${put.status} ${await put.text()}`);
  const complete = await api(service, "POST", `/v3/assets/${created.body.data.asset_id}/complete`, {
    key,
  });
  return { assetId: created.body.data.asset_id, complete };
}

/** Polls a render's record until it is completed or failed; answers the record. */
export async function waitForTerminalRender(
  service: { url: string; apiKey: string },
  renderId: string,
  timeoutMs = 90_000,
): Promise<Json> {
  return waitFor(
    `render ${renderId} to finish`,
    async () => {
      const response = await api(service, "GET", `/v3/svc/renders/${renderId}`, {
        key: service.apiKey,
      });
      return ["completed", "failed"].includes(response.body.data?.status)
        ? response.body.data
        : undefined;
    },
    { timeoutMs, intervalMs: 200 },
  );
}

export async function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  // An admin command on a service's data dir uses that service's database (the PostgreSQL one
  // when the test project runs the service on PostgreSQL).
  const dataDir = args[args.indexOf("--data-dir") + 1];
  const databaseUrl =
    args.includes("--data-dir") && dataDir ? await suiteDatabase(dataDir) : undefined;
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: REPO,
    env: { ...process.env, ...(databaseUrl ? { SVC_DATABASE_URL: databaseUrl } : {}), ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
  const code = await new Promise<number>((r) => child.on("exit", (c) => r(c ?? 1)));
  return { code, stdout, stderr };
}
