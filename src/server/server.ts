// Starting and stopping the service: data dir (0700) with the signing secret (0600), SQLite
// database, the local account on first start, HTTP listener, render workers and the webhook
// dispatcher. Shutdown is graceful: /readyz turns 503, workers stop claiming and running renders
// get the grace period to finish before their leases are released for the next start.
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { ensureLocalAccount } from "./auth/accounts";
import { configureApp, createFastify } from "./http/app";
import type { ServerConfig } from "./config";
import type { ServiceContext } from "./context";
import type { Database } from "./db/database";
import { openSqliteDatabase } from "./db/sqlite";
import { SqlJobQueue } from "./queue/sql-queue";
import { RateLimiter } from "./http/rate-limit";
import { openObjectStore } from "./storage/open-store";
import { WebhookDispatcher } from "./webhooks/webhooks";
import { WorkerPool, type RenderFunction } from "./render/worker";

export interface RunningServer {
  url: string;
  /** Set when this start created the local account and wrote its credentials file. */
  createdCredentialsFile: string | undefined;
  close(): Promise<void>;
}

export interface StartOptions {
  /** The engine entry point; injectable so API-only tests need no browser. */
  render?: RenderFunction;
}

const unavailableEngine: RenderFunction = () =>
  Promise.reject(new Error("this process has no render workers"));

export async function prepareDataDir(dataDir: string): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await mkdir(join(dataDir, "tmp"), { recursive: true });
}

export async function openDataDirDatabase(dataDir: string): Promise<Database> {
  await prepareDataDir(dataDir);
  return openSqliteDatabase(join(dataDir, "svc.db"));
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export async function startServer(
  config: ServerConfig,
  options: StartOptions = {},
): Promise<RunningServer> {
  await prepareDataDir(config.dataDir);
  const unlock = await lockDataDir(config.dataDir);
  const db = await openDataDirDatabase(config.dataDir).catch(async (error: unknown) => {
    await unlock();
    throw error;
  });
  // Renders' temp files (the engine uses the OS temp dir) stay inside the data dir.
  process.env.TMPDIR = join(config.dataDir, "tmp");
  // This process holds the data dir lock: leftovers of a killed predecessor can go.
  await rm(join(config.dataDir, "work"), { recursive: true, force: true });
  await rm(join(config.dataDir, "tmp"), { recursive: true, force: true });
  await mkdir(join(config.dataDir, "tmp"), { recursive: true });
  const created = await ensureLocalAccount(db, config.dataDir, config.localAccountCredits);

  const app = createFastify(config.logLevel);
  let baseUrl = process.env.SVC_SERVER_PUBLIC_URL?.replace(/\/+$/, "") ?? "";
  const store = await openObjectStore(config, {
    signingSecret: await signingSecret(config.dataDir),
    baseUrl: () => baseUrl,
  }).catch(async (error: unknown) => {
    await db.destroy();
    await unlock();
    throw error;
  });
  const ctx: ServiceContext = { config, db, store, log: app.log, now: Date.now };
  const queue = new SqlJobQueue(db, {
    leaseSeconds: config.leaseSeconds,
    maxAttempts: config.maxAttempts,
  });
  let ready = false;
  configureApp(app, ctx, {
    queue,
    limiter: new RateLimiter(config.rateLimitPerMinute),
    store,
    isReady: () => ready,
  });
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host}:${address.port}`;
  if (!baseUrl) baseUrl = url;

  // The engine (browser + ffmpeg discovery) loads only when this process renders.
  const render =
    options.render ??
    (config.workers > 0 ? (await import("../engine/render")).renderComposition : unavailableEngine);
  const workers = new WorkerPool(ctx, queue, render);
  workers.start(config.workers);
  const webhooks = new WebhookDispatcher(ctx);
  webhooks.start();
  ready = true;

  let closing: Promise<void> | undefined;
  return {
    url,
    createdCredentialsFile: created?.credentialsFile,
    close() {
      closing ??= (async () => {
        ready = false;
        await workers.stop(config.shutdownGraceSeconds * 1000);
        await webhooks.stop();
        await app.close();
        await db.destroy();
        await unlock();
      })();
      return closing;
    },
  };
}
