// Starting and stopping the service: data dir (0700) with the signing secret (0600), database,
// the local account on first start, HTTP listener, render workers and the webhook dispatcher.
// Roles: `all` (the embedded default: SQLite, local storage, the table queue, everything in one
// process), `api` (stateless HTTP + webhooks) and `worker` (renders; its listener answers only
// /healthz and /readyz) — the scale-out shape, where every process shares PostgreSQL (with pg-boss
// for the queue) and S3-compatible storage. Shutdown is graceful: /readyz turns 503, workers stop
// claiming and running renders get the grace period to finish before their leases are released.
import { configureLibraryCache } from "../node/index";
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { ensureLocalAccount } from "./auth/accounts";
import { configureApp, createFastify, registerHealthRoutes } from "./http/app";
import type { ServerConfig } from "./config";
import type { ServiceContext } from "./context";
import type { Database } from "./db/database";
import { openPostgresDatabase } from "./db/postgres";
import { openSqliteDatabase } from "./db/sqlite";
import type { JobQueue } from "./queue/job-queue";
import { PgBossJobQueue } from "./queue/pgboss-queue";
import { SqlJobQueue } from "./queue/sql-queue";
import {
  isLoopbackHost,
  measureRequests,
  registerMetricsRoute,
  startMetricsListener,
} from "./http/metrics-routes";
import { ServiceMetrics } from "./metrics";
import { openObjectStore } from "./storage/open-store";
import { isAlive } from "./process-alive";
import { WebhookDispatcher } from "./webhooks/webhooks";
import { WorkerPool, type Engine } from "./render/worker";
import { RenderAdmission } from "./render/admission";

export interface RunningServer {
  url: string;
  /** Set when this start created the local account and wrote its credentials file. */
  createdCredentialsFile: string | undefined;
  close(): Promise<void>;
}

export interface StartOptions {
  /** The engine; injectable so API-only tests need no browser. */
  engine?: Engine;
}

const unavailable = () => Promise.reject(new Error("this process runs no queue jobs (--jobs 0)"));
const noEngine: Engine = {
  renderComposition: unavailable,
  renderChunk: unavailable,
  joinChunks: unavailable,
  renderOutput: unavailable,
  closeWarmPages: async () => undefined,
  warmUp: async () => undefined,
};

/** The engine, loaded (browser + FFmpeg discovery) only by a process that renders. */
async function loadEngine(): Promise<Engine> {
  const { renderComposition, renderChunk, joinChunks, closeWarmPages, warmUp, renderOutput } =
    await import("../engine/index");
  return { renderComposition, renderChunk, joinChunks, renderOutput, closeWarmPages, warmUp };
}

export async function prepareDataDir(dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await mkdir(join(dataDir, "tmp"), { recursive: true });
}

/** The service's database: PostgreSQL when SVC_DATABASE_URL says so, else SQLite in the data dir. */
export async function openServiceDatabase(
  config: Pick<ServerConfig, "dataDir" | "databaseUrl">,
): Promise<Database> {
  await prepareDataDir(config.dataDir);
  return config.databaseUrl
    ? openPostgresDatabase(config.databaseUrl)
    : openSqliteDatabase(join(config.dataDir, "svc.db"));
}

async function openQueue(config: ServerConfig, db: Database, ctx: () => ServiceContext) {
  if (!config.databaseUrl) {
    return new SqlJobQueue(db, {
      leaseSeconds: config.leaseSeconds,
      maxAttempts: config.maxAttempts,
    });
  }
  return PgBossJobQueue.start(
    config.databaseUrl,
    db,
    {
      leaseSeconds: config.leaseSeconds,
      maxAttempts: config.maxAttempts,
      // The lease notices a dead worker within seconds; this is pg-boss's own backstop.
      expireInSeconds: config.renderTimeoutSeconds + 300,
    },
    (error) => ctx().log.error({ err: error }, "job queue error"),
  );
}

async function signingSecret(dataDir: string): Promise<string> {
  const file = join(dataDir, "signing-secret");
  try {
    return (await readFile(file, "utf8")).trim();
  } catch {
    const secret = randomBytes(32).toString("hex");
    await writeFile(file, `${secret}\n`, { mode: 0o600, flag: "wx" }).catch(async () => undefined);
    await chmod(file, 0o600);
    return (await readFile(file, "utf8")).trim();
  }
}

/**
 * One service process per data dir: SQLite, the local store and the work dir belong to it. A lock
 * file holds the owner's pid; a lock left by a dead process (SIGKILL, crash) is taken over.
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = join(dataDir, "server.lock");
  for (let tries = 0; tries < 2; tries++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      return () => rm(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = Number((await readFile(file, "utf8").catch(() => "")).trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
        throw new Error(`another svc server (pid ${owner}) is using ${dataDir}`);
      }
      await rm(file, { force: true });
    }
  }
  throw new Error(`cannot lock ${dataDir}`);
}

export async function startServer(
  config: ServerConfig,
  options: StartOptions = {},
): Promise<RunningServer> {
  await prepareDataDir(config.dataDir);
  const unlock = await lockDataDir(config.dataDir);
  const db = await openServiceDatabase(config).catch(async (error: unknown) => {
    await unlock();
    throw error;
  });
  // Renders' temp files (the engine uses the OS temp dir) stay inside the data dir.
  process.env.TMPDIR = join(config.dataDir, "tmp");
  // This process holds the data dir lock: leftovers of a killed predecessor can go.
  await rm(join(config.dataDir, "work"), { recursive: true, force: true });
  await rm(join(config.dataDir, "tmp"), { recursive: true, force: true });
  await mkdir(join(config.dataDir, "tmp"), { recursive: true });
  // CDN libraries the pages load are fetched by svc from the npm registry and kept here.
  configureLibraryCache({ root: join(config.dataDir, "cache", "npm") });

  const app = createFastify(config.logLevel, config.trustedProxies);
  const metrics = new ServiceMetrics(db, { role: config.role });
  measureRequests(app, metrics);
  let baseUrl = process.env.SVC_SERVER_PUBLIC_URL?.replace(/\/+$/, "") ?? "";
  const cleanUp: (() => Promise<unknown>)[] = [() => unlock(), () => db.destroy()];
  const undo = async () => {
    for (const step of cleanUp.reverse()) await step().catch(() => undefined);
  };
  let ctx: ServiceContext;
  let queue: JobQueue;
  let created: Awaited<ReturnType<typeof ensureLocalAccount>>;
  try {
    const store = await openObjectStore(config, {
      signingSecret: await signingSecret(config.dataDir),
      baseUrl: () => baseUrl,
    });
    ctx = { config, db, store, log: app.log, now: Date.now, metrics };
    queue = await openQueue(config, db, () => ctx);
    cleanUp.push(() => queue.close());
    // A shared PostgreSQL serves many accounts: the local account is made only where asked for.
    created =
      !config.databaseUrl || process.env.SVC_SERVER_LOCAL_ACCOUNT === "1"
        ? await ensureLocalAccount(db, config.dataDir, config.localAccountCredits)
        : undefined;
  } catch (error) {
    await undo();
    throw error;
  }
  let ready = false;
  let shuttingDown = false;
  const dependencies = {
    queue,
    store: ctx.store,
    isReady: () => ready,
    isClosing: () => shuttingDown,
  };
  if (config.role === "worker") registerHealthRoutes(app, ctx, dependencies);
  else configureApp(app, ctx, dependencies);
  if (config.metricsPort === undefined && isLoopbackHost(config.host))
    registerMetricsRoute(app, metrics);
  await app.listen({ host: config.host, port: config.port });
  if (config.metricsPort !== undefined) {
    const listener = await startMetricsListener(metrics, config.metricsHost, config.metricsPort);
    cleanUp.push(() => listener.close());
    ctx.log.info({ url: listener.url }, "metrics listening");
  } else if (!isLoopbackHost(config.host)) {
    ctx.log.info(
      "GET /metrics is not served on a non-loopback address; set SVC_SERVER_METRICS_PORT to serve it on its own listener",
    );
  }
  const address = app.server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host}:${address.port}`;
  if (!baseUrl) baseUrl = url;

  const engine = options.engine ?? (config.jobs > 0 ? await loadEngine() : noEngine);
  const pool = new WorkerPool(ctx, queue, engine);
  pool.start(config.jobs);
  const webhooks = new WebhookDispatcher(ctx);
  if (config.role !== "worker") webhooks.start();
  const admission = new RenderAdmission(ctx, queue);
  admission.start();
  ready = true;
  ctx.log.info(
    {
      role: config.role,
      worker: config.workerName,
      jobs: config.jobs,
      database: config.databaseUrl ? "postgres" : "sqlite",
      maxChunks: config.maxChunks,
    },
    "service started",
  );
  if (config.jobs > 0) void logPageFence(ctx, config.allowPageNetwork);

  let closing: Promise<void> | undefined;
  return {
    url,
    createdCredentialsFile: created?.credentialsFile,
    close() {
      closing ??= (async () => {
        ready = false;
        shuttingDown = true;
        await pool.stop(config.shutdownGraceSeconds * 1000);
        await webhooks.stop();
        await admission.stop();
        await app.close();
        await undo();
      })();
      return closing;
    },
  };
}

/**
 * Says at start-up how customers' pages are fenced in on this machine (engine confinement.ts): a
 * warning when the network is closed by browser switches only or Chromium's sandbox is off, with
 * why, so an operator sees it without running `svc doctor`.
 */
async function logPageFence(ctx: ServiceContext, allowPageNetwork: boolean): Promise<void> {
  try {
    const { resolveChromium, serviceRendersCheck } = await import("../engine/index");
    const fence = serviceRendersCheck((await resolveChromium()).executablePath);
    const strong = fence.network === "namespace" && fence.sandbox && !allowPageNetwork;
    ctx.log[strong ? "info" : "warn"](
      {
        pageNetwork: allowPageNetwork ? "open (SVC_SERVER_ALLOW_PAGE_NETWORK)" : fence.network,
        sandbox: fence.sandbox,
        ...(fence.uid !== undefined ? { browserUid: fence.uid } : {}),
      },
      `customers' pages: ${allowPageNetwork ? "network open by SVC_SERVER_ALLOW_PAGE_NETWORK" : fence.reason}; ${fence.sandboxReason}`,
    );
  } catch (error) {
    ctx.log.warn({ err: error }, "could not tell how customers' pages are fenced in");
  }
}
