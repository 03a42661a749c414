// The template's settings, all from the environment (twelve-factor: the same image runs on every
// platform shape). Every value is checked at start, so a typo stops the server with a message
// naming the variable instead of surfacing later as a failed render.
import { resolve } from "node:path";

/** The port `npm start` listens on when PORT is unset. */
export const DEFAULT_PORT = 7740;

export type RenderMode = "sync" | "async";

export interface TemplateConfig {
  host: string;
  port: number;
  /** async: POST answers {call_id} at once; sync: POST answers when the video is stored. */
  renderMode: RenderMode;
  /** Folder holding one folder per composition (`<name>/index.html`). */
  compositionsDir: string;
  /** The composition a request without `composition` renders. */
  defaultComposition: string | undefined;
  /** Finished videos (the folder store). */
  storageDir: string;
  /** Per-render scratch space of the sandbox; emptied after each render. */
  workDir: string;
  maxConcurrentRenders: number;
  /** A render still running after this many seconds is killed and fails with render_timeout. */
  renderTimeLimitSeconds: number;
  maxBodyBytes: number;
  /** The svc render service, when both are set: renders run there instead of in a sandbox. */
  service: { url: string; apiKey: string; pollIntervalSeconds: number } | undefined;
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
  if (env.S3_BUCKET?.trim()) {
    throw new ConfigError(
      "S3_BUCKET is set, but this copy of the template stores videos in a folder only. Implement " +
        'RenderStore for your bucket in src/storage.ts (README: "S3-compatible storage"), or unset S3_BUCKET.',
    );
  }
  const serviceUrl = env.SVC_API_URL?.trim().replace(/\/+$/, "") ?? "";
  const apiKey = env.SVC_API_KEY?.trim() ?? "";
  if (Boolean(serviceUrl) !== Boolean(apiKey)) {
    throw new ConfigError(
      "Set both SVC_API_URL and SVC_API_KEY to render on an svc render service, or neither to render here.",
    );
  }
  const dataDir = resolve(cwd, env.DATA_DIR?.trim() || "data");
  return {
    host: env.HOST?.trim() || "127.0.0.1",
    port: integer(env, "PORT", DEFAULT_PORT, 0, 65535),
    renderMode: mode,
    compositionsDir: resolve(cwd, env.COMPOSITIONS_DIR?.trim() || "compositions"),
    defaultComposition: env.DEFAULT_COMPOSITION?.trim() || undefined,
    storageDir: resolve(cwd, env.STORAGE_DIR?.trim() || resolve(dataDir, "renders")),
    workDir: resolve(cwd, env.WORK_DIR?.trim() || resolve(dataDir, "work")),
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
