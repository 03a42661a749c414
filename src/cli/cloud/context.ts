// What every command that talks to the render service needs: the base URL, the credential and an
// API client — plus, when SVC_API_URL is unset and nothing answers on 127.0.0.1:7733, the
// embedded local service started in this process for the duration of the command (data in
// ~/.svc/local). The CLI layer does this because only it may import src/server.
import { ApiClient } from "../../core/index";
import { loadClientConfig, type ClientConfig } from "../../core/index";
import { resolveCredential, type ResolvedCredential } from "../../core/index";
import { ClientError } from "../../core/index";
import { openCredentialBackend } from "../../core/index";
import { isServiceAnswering } from "../../core/index";
import { apiCredential, OAuthSession } from "../../core/index";
import { LOCAL_SERVICE_PORT } from "../../shared/limits";
import { loadConfig } from "../../server/index";
import type { startServer } from "../../server/start";
import type { CliIo } from "../io";
import { VERSION } from "../version";

/** Generated idempotency keys start with this, so the service's records show the CLI made them. */
export const CLI_KEY_PREFIX = "svc-cli";

export interface CloudContext {
  config: ClientConfig;
  client: ApiClient;
  credential: ResolvedCredential | undefined;
  /** True when this command started the local service in-process. */
  embedded: boolean;
  /** Stops the embedded service when this command started one. */
  close(): Promise<void>;
}

export function notSignedInError(): ClientError {
  return new ClientError(
    "not_signed_in",
    "No credential: svc is not signed in to the render service.",
    "Run `svc auth login --api-key` (or set SVC_API_KEY).",
  );
}

/** Starts the local service in-process when the default URL has nothing listening. */
export async function ensureLocalService(
  io: CliIo,
  config: ClientConfig,
): Promise<{ embedded: boolean; close: () => Promise<void> }> {
  if (!config.usesDefaultService || (await isServiceAnswering(config.apiUrl))) {
    return { embedded: false, close: async () => {} };
  }
  const serverConfig = loadConfig(
    {
      host: "127.0.0.1",
      port: Number(new URL(config.apiUrl).port) || LOCAL_SERVICE_PORT,
      dataDir: config.localDataDir,
    },
    {
      ...io.env,
      // The service's request log would drown the command's own output, and a Ctrl+C should
      // not wait for a render: its lease is released and the next start picks it up again.
      SVC_SERVER_LOG_LEVEL: io.env.SVC_SERVER_LOG_LEVEL ?? "warn",
      SVC_SERVER_SHUTDOWN_GRACE_SECONDS: io.env.SVC_SERVER_SHUTDOWN_GRACE_SECONDS ?? "1",
    },
  );
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    // Loaded here, not at the top: only this path needs the service's code (see src/cli/server.ts).
    const { startServer } = await import("../../server/start");
    running = await startServer(serverConfig);
  } catch (error) {
    throw new ClientError(
      "local_service_failed",
      `Nothing answers on ${config.apiUrl} and the local service could not start: ${(error as Error).message}`,
      "Start it with `svc server`, or point SVC_API_URL at a render service.",
    );
  }
  io.stderr.write(
    `svc: no service on ${config.apiUrl}; started the local service for this command (data in ${config.localDataDir})\n`,
  );
  return { embedded: true, close: () => running.close() };
}

export async function openCloudContext(
  io: CliIo,
  options: { requireCredential?: boolean } = {},
): Promise<CloudContext> {
  const config = loadClientConfig(io.env);
  const { embedded, close } = await ensureLocalService(io, config);
  try {
    const backend = cliCredentialBackend(io, config);
    const credential = await resolveCredential(config, io.env, backend);
    if (!credential && options.requireCredential !== false) throw notSignedInError();
    // An OAuth sign-in is refreshed 60 s before it expires, and on a 401 once (then replayed).
    const oauth =
      credential?.kind === "oauth" ? new OAuthSession(backend, config.apiUrl) : undefined;
    const client = new ApiClient({
      baseUrl: config.apiUrl,
      ...(await apiCredential(credential, oauth)),
      userAgent: `svc-cli/${VERSION}`,
    });
    return { config, client, credential, embedded, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The credential store with this command's environment; its one warning goes to stderr. */
export function cliCredentialBackend(io: CliIo, config: ClientConfig) {
  return openCredentialBackend(config, {
    env: io.env,
    warn: (message) => io.stderr.write(`${message}\n`),
  });
}

/** Runs `action` with a context, always closing it (and an embedded service) afterwards. */
export async function withCloudContext<T>(
  io: CliIo,
  action: (context: CloudContext) => Promise<T>,
  options: { requireCredential?: boolean } = {},
): Promise<T> {
  const context = await openCloudContext(io, options);
  try {
    return await action(context);
  } finally {
    await context.close();
  }
}
