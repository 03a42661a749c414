// The template's settings, all from the environment (twelve-factor: the same image runs on every
// platform shape). Every value is checked at start, so a typo stops the server with a message
// naming the variable instead of surfacing later as a failed render.
import { resolve } from "node:path";

/** The port `npm start` listens on when PORT is unset. */
export const DEFAULT_PORT = 7740;

export type RenderMode = "sync" | "async";

/** The shortest RENDER_API_TOKEN accepted: a guessable token is no token. */
export const MIN_TOKEN_LENGTH = 24;

export interface TemplateConfig {
  host: string;
  port: number;
  /** async: POST answers {call_id} at once; sync: POST answers when the video is stored. */
  renderMode: RenderMode;
  /** Folder holding one folder per composition (`<name>/index.html`). */
  compositionsDir: string;
  /** The composition a request without `composition` renders. */
  defaultComposition: string | undefined;
  /** Finished videos (the folder store), unless `s3` is set. */
  storageDir: string;
  /** S3-compatible storage (S3_BUCKET set): finished videos go there instead. */
  s3: S3Settings | undefined;
  /** Per-render scratch space of the sandbox; emptied after each render. */
  workDir: string;
  maxConcurrentRenders: number;
  /** A render still running after this many seconds is killed and fails with render_timeout. */
  renderTimeLimitSeconds: number;
  maxBodyBytes: number;
  /**
   * The token `POST /api/render` requires (`Authorization: Bearer <token>`); undefined: anyone
   * may render, allowed only on loopback or with ALLOW_ANONYMOUS_RENDERS=1.
   */
  renderToken: string | undefined;
  /**
   * Origins a render's page and its image variables may reach beyond the composition's files
   * (ALLOWED_ORIGINS); "*" for any. Empty: project files only.
   */
  allowedOrigins: readonly string[] | "*";
  /** The svc render service, when both are set: renders run there instead of in a sandbox. */
  service: { url: string; apiKey: string; pollIntervalSeconds: number } | undefined;
}

export interface S3Settings {
  bucket: string;
  /** Put before every object name with a slash; "" for none. */
  prefix: string;
  region: string;
  /** An S3-compatible server (R2, MinIO, ...); unset: AWS S3 itself. */
  endpoint: string | undefined;
  /** Unset: the SDK's default chain (instance or task role, profile). */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  /** How long the presigned URL that GET /renders/:name redirects to stays valid. */
  urlExpiresSeconds: number;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

function integer(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, not "${raw}".`);
  }
  return value;
}

export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): TemplateConfig {
  const mode = env.RENDER_MODE?.trim() || "async";
  if (mode !== "sync" && mode !== "async") {
    throw new ConfigError(`RENDER_MODE must be "sync" or "async", not "${mode}".`);
  }
  const serviceUrl = env.SVC_API_URL?.trim().replace(/\/+$/, "") ?? "";
  const apiKey = env.SVC_API_KEY?.trim() ?? "";
  if (Boolean(serviceUrl) !== Boolean(apiKey)) {
    throw new ConfigError(
      "Set both SVC_API_URL and SVC_API_KEY to render on an svc render service, or neither to render here.",
    );
  }
  const dataDir = resolve(cwd, env.DATA_DIR?.trim() || "data");
  const host = env.HOST?.trim() || "127.0.0.1";
  return {
    host,
    renderToken: loadRenderToken(env, host),
    allowedOrigins: loadAllowedOrigins(env),
    port: integer(env, "PORT", DEFAULT_PORT, 0, 65535),
    renderMode: mode,
    compositionsDir: resolve(cwd, env.COMPOSITIONS_DIR?.trim() || "compositions"),
    defaultComposition: env.DEFAULT_COMPOSITION?.trim() || undefined,
    storageDir: resolve(cwd, env.STORAGE_DIR?.trim() || resolve(dataDir, "renders")),
    workDir: resolve(cwd, env.WORK_DIR?.trim() || resolve(dataDir, "work")),
    s3: env.S3_BUCKET?.trim() ? loadS3Settings(env) : undefined,
    maxConcurrentRenders: integer(env, "MAX_CONCURRENT_RENDERS", 2, 1, 64),
    renderTimeLimitSeconds: integer(env, "RENDER_TIME_LIMIT_SECONDS", 600, 1, 5 * 3600),
    maxBodyBytes: integer(env, "MAX_BODY_BYTES", 64 * 1024, 1024, 16 * 1024 * 1024),
    service: serviceUrl
      ? {
          url: serviceUrl,
          apiKey,
          pollIntervalSeconds: integer(env, "SVC_POLL_INTERVAL_SECONDS", 2, 1, 60),
        }
      : undefined,
  };
}

/** Whether HOST keeps the server on this machine (the only place an open render API is safe). */
export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

function loadRenderToken(env: NodeJS.ProcessEnv, host: string): string | undefined {
  const token = env.RENDER_API_TOKEN?.trim() ?? "";
  const anonymous = env.ALLOW_ANONYMOUS_RENDERS?.trim() ?? "";
  if (anonymous && anonymous !== "1" && anonymous !== "0") {
    throw new ConfigError(`ALLOW_ANONYMOUS_RENDERS must be 1 or 0, not "${anonymous}".`);
  }
  if (token) {
    if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
      throw new ConfigError(
        `RENDER_API_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters without spaces; make one with \`openssl rand -hex 32\`.`,
      );
    }
    return token;
  }
  if (!isLoopbackHost(host) && anonymous !== "1") {
    throw new ConfigError(
      `HOST=${host} lets other machines reach POST /api/render, so it needs a token: set RENDER_API_TOKEN to a long random secret (\`openssl rand -hex 32\`) and send it as "Authorization: Bearer <token>". To let anyone who can reach the server render, set ALLOW_ANONYMOUS_RENDERS=1 instead.`,
    );
  }
  return undefined;
}

function loadAllowedOrigins(env: NodeJS.ProcessEnv): readonly string[] | "*" {
  const raw = env.ALLOWED_ORIGINS?.trim() ?? "";
  if (raw === "*") return "*";
  const origins: string[] = [];
  for (const entry of raw
    .split(",")
    .map((value) => value.trim())
    .filter(Boolean)) {
    let origin: string | undefined;
    try {
      const url = new URL(entry);
      if (/^https?:$/.test(url.protocol) && url.origin === entry.replace(/\/+$/, "").toLowerCase())
        origin = url.origin;
    } catch {
      origin = undefined;
    }
    if (!origin) {
      throw new ConfigError(
        `ALLOWED_ORIGINS must list origins like https://cdn.example.com (scheme, host and port only, comma-separated), or be "*"; "${entry}" is not one.`,
      );
    }
    origins.push(origin);
  }
  return origins;
}

function loadS3Settings(env: NodeJS.ProcessEnv): S3Settings {
  const bucket = env.S3_BUCKET!.trim();
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new ConfigError(
      `S3_BUCKET must be a bucket name (3-63 lowercase letters, digits, dots and hyphens), not "${bucket}".`,
    );
  }
  const prefix = env.S3_PREFIX?.trim().replace(/^\/+|\/+$/g, "") ?? "";
  if (prefix && !/^[\w-][\w.-]*(\/[\w-][\w.-]*)*$/.test(prefix)) {
    throw new ConfigError(
      `S3_PREFIX may hold only folder names of letters, digits, _ . - (not starting with a dot) between single slashes, not "${prefix}".`,
    );
  }
  // The SDK's own names: the S3-only variable wins over the general one.
  const endpointVariable = env.AWS_ENDPOINT_URL_S3?.trim()
    ? "AWS_ENDPOINT_URL_S3"
    : "AWS_ENDPOINT_URL";
  const endpoint = env[endpointVariable]?.trim().replace(/\/+$/, "") || undefined;
  if (endpoint && !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(endpoint)) {
    throw new ConfigError(
      `${endpointVariable} must be the object store's http:// or https:// URL, not "${endpoint}".`,
    );
  }
  // An S3-compatible server usually ignores the region (it is still signed); AWS needs the real one.
  const region =
    env.AWS_REGION?.trim() || env.AWS_DEFAULT_REGION?.trim() || (endpoint ? "us-east-1" : "");
  if (!region) {
    throw new ConfigError(
      "S3_BUCKET is set without AWS_ENDPOINT_URL, so the bucket is on AWS S3: set AWS_REGION to its region.",
    );
  }
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim() ?? "";
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim() ?? "";
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    throw new ConfigError(
      "Set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither to use the platform's role.",
    );
  }
  const sessionToken = env.AWS_SESSION_TOKEN?.trim();
  return {
    bucket,
    prefix,
    region,
    endpoint,
    credentials: accessKeyId
      ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }
      : undefined,
    urlExpiresSeconds: integer(env, "S3_URL_EXPIRES_SECONDS", 3600, 60, 7 * 24 * 3600),
  };
}
