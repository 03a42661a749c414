// Service configuration: flags of `svc server` plus SVC_SERVER_* environment variables for the
// knobs an operator (or a test) rarely turns. Defaults are the embedded desktop setup: loopback
// only, one worker, page network off, private webhook/url targets refused.
import { availableParallelism, homedir, hostname } from "node:os";
import { join, resolve } from "node:path";
import { LOCAL_SERVICE_PORT } from "../shared/limits";

export type ServerRole = "all" | "api" | "worker";

export interface ServerConfig {
  /** all: API + workers in one process (the embedded default); api or worker: the scale-out shape. */
  role: ServerRole;
  /** SVC_DATABASE_URL: postgres://... selects PostgreSQL and pg-boss; unset: SQLite in the data dir. */
  databaseUrl: string | undefined;
  /** Target seconds of video per chunk of a distributed render (whole segments). */
  chunkSeconds: number;
  /** The most chunks one render is cut into; 1 renders every render whole on one worker. */
  maxChunks: number;
  /**
   * How a render is cut: "workers" (default) into about chunksPerWorker chunks per live worker,
   * each at least minChunkFrames long; "seconds" into chunkSeconds-long chunks (set by giving
   * SVC_SERVER_CHUNK_SECONDS).
   */
  chunkSizing: "workers" | "seconds";
  chunksPerWorker: number;
  minChunkFrames: number;
  /** SVC_SERVER_PROJECT_CACHE_MB: disk a worker keeps unzipped projects in (least recently used out). */
  projectCacheBytes: number;
  /**
   * A render's last chunk still running after the others are done is started a second time on an
   * idle worker once it has run speculativeFactor x the median chunk time and at least
   * speculativeMinSeconds (render/speculation.ts). SVC_SERVER_SPECULATIVE_FACTOR=0 turns it off.
   */
  speculativeFactor: number;
  speculativeMinSeconds: number;
  /** This worker's name in logs and chunk records (default: the host name). */
  workerName: string;
  host: string;
  port: number;
  dataDir: string;
  /** Queue jobs this process runs at a time (default: half the cores, at least 1); 0: API only. */
  jobs: number;
  /** Lease a worker holds on a job; renewed by heartbeats every leaseSeconds/3. */
  leaseSeconds: number;
  maxAttempts: number;
  renderTimeoutSeconds: number;
  /** Lifetime of signed download URLs (video_url, thumbnail_url). */
  downloadUrlTtlSeconds: number;
  uploadUrlTtlSeconds: number;
  /**
   * Requests per minute per credential; 0 disables the limit. Counted in the database, so every
   * API process on one database shares it.
   */
  rateLimitPerMinute: number;
  /**
   * Failed credentials (wrong or revoked API keys and access tokens, refused OAuth grants) one
   * client address may send per authFailureWindowSeconds before every credential it sends is
   * answered 429 until the window ends; 0 turns the throttle off (http/failed-credentials.ts).
   */
  authFailuresPerClient: number;
  /** The same per key prefix (`svc_key_` and its next 4 characters), from any client. */
  authFailuresPerKeyPrefix: number;
  authFailureWindowSeconds: number;
  /** Device codes (`POST /v1/oauth/device/code`) one client address may create per window. */
  deviceCodesPerClient: number;
  /**
   * SVC_SERVER_TRUSTED_PROXIES: addresses or CIDRs of the load balancers in front, comma-separated;
   * their X-Forwarded-For then names the client address the limits above count.
   */
  trustedProxies: string[];
  /** Renders in progress per account (queued for a worker or rendering); more wait held. 0: no cap. */
  maxRendersPerAccount: number;
  /**
   * Where GET /metrics is served: its own listener when metricsPort is set (on metricsHost,
   * default 127.0.0.1), else the main listener when that is on loopback, else nowhere.
   */
  metricsHost: string;
  metricsPort: number | undefined;
  /** Let renders' pages reach the network. */
  allowPageNetwork: boolean;
  /** Allow webhook and project URLs that resolve to private, loopback or link-local addresses. */
  allowPrivateTargets: boolean;
  /** Allow plain http callback URLs when the host is loopback. */
  allowHttpLoopbackCallbacks: boolean;
  webhookBackoffBaseMs: number;
  webhookBackoffCapMs: number;
  webhookMaxAttempts: number;
  urlFetchTimeoutMs: number;
  /** How long a graceful shutdown waits for running renders before releasing their leases. */
  shutdownGraceSeconds: number;
  logLevel: string;
  /** Credits given to the local account created on first start. */
  localAccountCredits: number;
  /** OAuth (issue 6): lifetimes of access tokens, refresh tokens, codes and device codes. */
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  authorizationCodeTtlSeconds: number;
  deviceCodeTtlSeconds: number;
  /** Minimum seconds between device-code polls (RFC 8628 `interval`). */
  devicePollIntervalSeconds: number;
}

export interface ServerFlags {
  role?: ServerRole;
  host?: string;
  port?: number;
  dataDir?: string;
  jobs?: number;
}

export function defaultDataDir(): string {
  return join(homedir(), ".svc", "local");
}

export function loadConfig(
  flags: ServerFlags = {},
  env: NodeJS.ProcessEnv = process.env,
): ServerConfig {
  const num = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === "") return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0)
      throw new Error(`${name} must be a non-negative number`);
    return value;
  };
  const bool = (name: string): boolean => /^(1|true|yes|on)$/i.test(env[name] ?? "");
  const role = flags.role ?? "all";
  const databaseUrl = env.SVC_DATABASE_URL?.trim() || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error("SVC_DATABASE_URL must be a postgres:// URL (unset it to use SQLite)");
  }
  if (role !== "all" && !(databaseUrl && env.SVC_STORAGE_URL?.trim())) {
    throw new Error(
      `--role ${role} needs SVC_DATABASE_URL (PostgreSQL) and SVC_STORAGE_URL (S3): the processes of the scale-out shape share them; without them run --role all`,
    );
  }
  return {
    role,
    databaseUrl,
    chunkSeconds: Math.max(1, num("SVC_SERVER_CHUNK_SECONDS", 10)),
    // Chunking pays where many machines share the work; the embedded default renders whole.
    maxChunks: Math.max(1, Math.floor(num("SVC_SERVER_MAX_CHUNKS", databaseUrl ? 256 : 1))),
    chunkSizing: env.SVC_SERVER_CHUNK_SECONDS?.trim() ? "seconds" : "workers",
    chunksPerWorker: Math.max(1, num("SVC_SERVER_CHUNKS_PER_WORKER", 2)),
    minChunkFrames: Math.max(1, Math.floor(num("SVC_SERVER_MIN_CHUNK_FRAMES", 30))),
    projectCacheBytes: Math.max(0, num("SVC_SERVER_PROJECT_CACHE_MB", 2048)) * 1024 * 1024,
    speculativeFactor: num("SVC_SERVER_SPECULATIVE_FACTOR", 2),
    speculativeMinSeconds: num("SVC_SERVER_SPECULATIVE_MIN_SECONDS", 30),
    workerName: env.SVC_WORKER_NAME?.trim() || hostname(),
    host: flags.host ?? "127.0.0.1",
    port: flags.port ?? LOCAL_SERVICE_PORT,
    dataDir: resolve(flags.dataDir ?? defaultDataDir()),
    // A render keeps about two cores busy (browser + encoder): one job at a time on 2 cores.
    jobs: role === "api" ? 0 : (flags.jobs ?? Math.max(1, Math.floor(availableParallelism() / 2))),
    leaseSeconds: num("SVC_SERVER_LEASE_SECONDS", 60),
    maxAttempts: num("SVC_SERVER_MAX_ATTEMPTS", 3),
    renderTimeoutSeconds: num("SVC_SERVER_RENDER_TIMEOUT_SECONDS", 30 * 60),
    downloadUrlTtlSeconds: num("SVC_SERVER_DOWNLOAD_URL_TTL_SECONDS", 15 * 60),
    uploadUrlTtlSeconds: num("SVC_SERVER_UPLOAD_URL_TTL_SECONDS", 60 * 60),
    rateLimitPerMinute: num("SVC_SERVER_RATE_LIMIT_PER_MINUTE", 600),
    authFailuresPerClient: Math.floor(num("SVC_SERVER_AUTH_FAILURES_PER_CLIENT", 30)),
    authFailuresPerKeyPrefix: Math.floor(num("SVC_SERVER_AUTH_FAILURES_PER_KEY_PREFIX", 10)),
    authFailureWindowSeconds: Math.max(1, num("SVC_SERVER_AUTH_FAILURE_WINDOW_SECONDS", 600)),
    deviceCodesPerClient: Math.floor(num("SVC_SERVER_DEVICE_CODES_PER_CLIENT", 20)),
    trustedProxies: (env.SVC_SERVER_TRUSTED_PROXIES ?? "")
      .split(",")
      .map((entry) => entry.trim())
      .filter(Boolean),
    maxRendersPerAccount: Math.floor(num("SVC_SERVER_MAX_RENDERS_PER_ACCOUNT", 0)),
    metricsHost: env.SVC_SERVER_METRICS_HOST?.trim() || "127.0.0.1",
    metricsPort: env.SVC_SERVER_METRICS_PORT?.trim()
      ? num("SVC_SERVER_METRICS_PORT", 0)
      : undefined,
    allowPageNetwork: bool("SVC_SERVER_ALLOW_PAGE_NETWORK"),
    allowPrivateTargets: bool("SVC_SERVER_ALLOW_PRIVATE_TARGETS"),
    allowHttpLoopbackCallbacks: bool("SVC_SERVER_ALLOW_HTTP_LOOPBACK_CALLBACKS"),
    webhookBackoffBaseMs: num("SVC_SERVER_WEBHOOK_BACKOFF_MS", 2_000),
    webhookBackoffCapMs: num("SVC_SERVER_WEBHOOK_BACKOFF_CAP_MS", 10 * 60_000),
    webhookMaxAttempts: num("SVC_SERVER_WEBHOOK_MAX_ATTEMPTS", 12),
    urlFetchTimeoutMs: num("SVC_SERVER_URL_FETCH_TIMEOUT_MS", 30_000),
    shutdownGraceSeconds: num("SVC_SERVER_SHUTDOWN_GRACE_SECONDS", 30),
    logLevel: env.SVC_SERVER_LOG_LEVEL ?? "info",
    localAccountCredits: num("SVC_SERVER_LOCAL_CREDITS", 1_000_000),
    accessTokenTtlSeconds: Math.max(1, num("SVC_SERVER_ACCESS_TOKEN_TTL_SECONDS", 3600)),
    refreshTokenTtlSeconds: Math.max(1, num("SVC_SERVER_REFRESH_TOKEN_TTL_SECONDS", 30 * 86_400)),
    authorizationCodeTtlSeconds: Math.max(1, num("SVC_SERVER_AUTHORIZATION_CODE_TTL_SECONDS", 60)),
    deviceCodeTtlSeconds: Math.max(1, num("SVC_SERVER_DEVICE_CODE_TTL_SECONDS", 600)),
    devicePollIntervalSeconds: Math.max(1, num("SVC_SERVER_DEVICE_POLL_INTERVAL_SECONDS", 5)),
  };
}
