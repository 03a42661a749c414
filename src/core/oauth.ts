// OAuth sign-in for the CLI and the desktop app (SPEC.md section 5), as the public client
// `svc-cli`: browser sign-in with PKCE S256 and a loopback listener on 127.0.0.1 (RFC 8252),
// the device grant for SSH sessions (RFC 8628), refresh with rotation, and revocation.
// Decisions: the loopback state is compared in constant time and a mismatch ends the sign-in
// (it means the answer is not for us); token requests are never retried (a replayed refresh
// would look like reuse and revoke the sign-in); tokens are saved only after /v3/users/me
// accepted them, otherwise they are revoked; a refresh is done once per store however many
// requests or processes need it (single flight + credential-lock.ts). Time, sleeping and opening
// a browser are injected.
import { startDetached, systemOpenCommand } from "../node/open";
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import got from "got";
import { z } from "zod";
import {
  CLI_CLIENT_ID,
  DEFAULT_SCOPE,
  DEVICE_CODE_GRANT,
  LOOPBACK_CALLBACK_PATH,
  OAUTH_PATHS,
  deviceAuthorizationSchema,
  oauthErrorSchema,
  tokenResponseSchema,
  type DeviceAuthorization,
  type TokenResponse,
} from "../shared/oauth";
import type { UserRecord } from "../shared/api";
import { sameSecret } from "../node/secrets";
import { ApiClient } from "./api-client";
import { sleep as defaultSleep, type Sleep } from "./backoff";
import { withCredentialLock } from "./credential-lock";
import type { OAuthTokens, StoredCredentials } from "./credentials";
import { ClientError, interruptedError, registerSecret } from "./errors";

export const LOGIN_TIMEOUT_MS = 120_000;
/** Refresh this long before the access token expires. */
export const REFRESH_SKEW_SECONDS = 60;

/** What the OAuth code needs of a credential store (the file or the keychain). */
export interface CredentialBackend {
  read(): Promise<StoredCredentials>;
  update(change: (current: StoredCredentials) => StoredCredentials): Promise<void>;
  /** Where the credential lives, for messages ("~/.svc/credentials", "the OS keychain"). */
  readonly location: string;
  /** The cross-process refresh lock (credential-lock.ts), next to the credentials file. */
  readonly lockFile: string;
}

export function createPkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export function authorizeUrl(
  baseUrl: string,
  input: { redirectUri: string; challenge: string; state: string; scope?: string },
): string {
  const query = new URLSearchParams({
    response_type: "code",
    client_id: CLI_CLIENT_ID,
    redirect_uri: input.redirectUri,
    code_challenge: input.challenge,
    code_challenge_method: "S256",
    scope: input.scope ?? DEFAULT_SCOPE,
    state: input.state,
  });
  return `${baseUrl}${OAUTH_PATHS.authorize}?${query.toString()}`;
}

/** Neutral hints for OAuth errors; the CLI and the app name their own commands and buttons. */
const HINTS: Record<string, string> = {
  access_denied: "The sign-in was denied in the browser; start the sign-in again to retry.",
  expired_token: "The code expired before it was approved; start the device sign-in again.",
  invalid_grant: "The sign-in is no longer valid; sign in again.",
};

/** One POST to an OAuth endpoint: form body, no retries, RFC errors as ClientErrors. */
async function oauthPost<T extends z.ZodType>(
  baseUrl: string,
  path: string,
  form: Record<string, string>,
  schema: T,
  signal?: AbortSignal,
): Promise<z.output<T>> {
  let response;
  try {
    response = await got.post(`${baseUrl}${path}`, {
      form,
      throwHttpErrors: false,
      retry: { limit: 0 },
      timeout: { request: 30_000 },
      responseType: "json",
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (signal?.aborted) throw interruptedError();
    throw new ClientError(
      "network_error",
      `Cannot reach the render service at ${baseUrl} (${(error as { code?: string }).code ?? (error as Error).message}).`,
      "Check SVC_API_URL and your connection.",
      { cause: error },
    );
  }
  if (response.statusCode === 200) {
    const parsed = schema.safeParse(response.body);
    if (parsed.success) return parsed.data;
  }
  const error = oauthErrorSchema.safeParse(response.body);
  if (error.success) {
    const { error: code, error_description: description } = error.data;
    throw new ClientError(code, `${description ?? code} (${code})`, HINTS[code], {
      status: response.statusCode,
    });
  }
  throw new ClientError(
    "unexpected_response",
    `The service answered ${path} with HTTP ${response.statusCode} and a body svc does not understand.`,
    "Check that the service URL points at an svc render service of a matching version.",
    { status: response.statusCode },
  );
}

function remember(tokens: TokenResponse): TokenResponse {
  registerSecret(tokens.access_token);
  registerSecret(tokens.refresh_token);
  return tokens;
}

export async function exchangeCode(
  baseUrl: string,
  input: { code: string; redirectUri: string; verifier: string },
  signal?: AbortSignal,
): Promise<TokenResponse> {
  registerSecret(input.code);
  return remember(
    await oauthPost(
      baseUrl,
      OAUTH_PATHS.token,
      {
        grant_type: "authorization_code",
        code: input.code,
        redirect_uri: input.redirectUri,
        client_id: CLI_CLIENT_ID,
        code_verifier: input.verifier,
      },
      tokenResponseSchema,
      signal,
    ),
  );
}

export async function refreshTokens(
  baseUrl: string,
  refreshToken: string,
  signal?: AbortSignal,
): Promise<TokenResponse> {
  registerSecret(refreshToken);
  return remember(
    await oauthPost(
      baseUrl,
      OAUTH_PATHS.token,
      { grant_type: "refresh_token", refresh_token: refreshToken, client_id: CLI_CLIENT_ID },
      tokenResponseSchema,
      signal,
    ),
  );
}

/** RFC 7009 revocation; the service revokes the whole sign-in the token belongs to. */
export async function revokeToken(
  baseUrl: string,
  token: string,
  hint: "access_token" | "refresh_token" = "refresh_token",
): Promise<void> {
  registerSecret(token);
  await oauthPost(
    baseUrl,
    OAUTH_PATHS.revoke,
    { token, token_type_hint: hint, client_id: CLI_CLIENT_ID },
    z.unknown(),
  );
}

export function storedTokens(tokens: TokenResponse, now = Date.now()): OAuthTokens {
  return {
    access_token: tokens.access_token,
    refresh_token: tokens.refresh_token,
    expires_at: Math.floor(now / 1000) + tokens.expires_in,
    scope: tokens.scope,
    token_type: tokens.token_type,
  };
}

// ---------------------------------------------------------------- browser sign-in

const CALLBACK_PAGE = (title: string, message: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title} · svc</title>
<style>body{font:16px/1.5 system-ui,sans-serif;background:#f4f5f7;margin:0}main{max-width:26rem;margin:15vh auto;background:#fff;border-radius:12px;padding:2rem;box-shadow:0 2px 12px rgba(0,0,0,.08)}</style>
</head><body><main><h1>${title}</h1><p>${message}</p></main></body></html>`;

export interface LoopbackListener {
  redirectUri: string;
  /** Resolves with the code once the browser comes back with the expected state. */
  code: Promise<string>;
  close(): void;
}

/** Listens on 127.0.0.1 (port 0) for the one redirect carrying the authorization code. */
export async function startLoopbackListener(
  expectedState: string,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<LoopbackListener> {
  let settle!: { resolve: (code: string) => void; reject: (error: Error) => void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  let done = false;
  const finish = (outcome: { code: string } | { error: ClientError }) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    if ("code" in outcome) settle.resolve(outcome.code);
    else settle.reject(outcome.error);
    // Let the page reach the browser before the sockets go.
    setImmediate(() => {
      server.close();
      server.closeAllConnections();
    });
  };
  const reply = (response: ServerResponse, status: number, title: string, message: string) => {
    response.writeHead(status, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
      "referrer-policy": "no-referrer",
      connection: "close",
    });
    response.end(CALLBACK_PAGE(title, message));
  };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (request.method !== "GET" || url.pathname !== LOOPBACK_CALLBACK_PATH || done) {
      response.writeHead(404, { connection: "close" }).end();
      return;
    }
    const state = url.searchParams.get("state") ?? "";
    if (!sameSecret(expectedState, state)) {
      reply(
        response,
        400,
        "Sign-in failed",
        "This answer does not belong to the sign-in that is waiting. Start the sign-in again from svc.",
      );
      finish({
        error: new ClientError(
          "oauth_state_mismatch",
          "The browser came back with a different state; the sign-in was refused.",
          "Start the sign-in again, and use the link it shows.",
        ),
      });
      return;
    }
    const error = url.searchParams.get("error");
    if (error) {
      reply(
        response,
        400,
        "Sign-in failed",
        "The sign-in was not completed. You can close this tab and return to svc.",
      );
      const description = url.searchParams.get("error_description") ?? error;
      finish({ error: new ClientError(error, `${description} (${error})`, HINTS[error]) });
      return;
    }
    const received = url.searchParams.get("code");
    if (!received) {
      reply(response, 400, "Sign-in failed", "The answer carried no code.");
      finish({
        error: new ClientError("invalid_request", "The browser came back without a code."),
      });
      return;
    }
    registerSecret(received);
    reply(
      response,
      200,
      "Signed in to svc",
      "You are signed in. You can close this tab and return to svc.",
    );
    finish({ code: received });
  });
  const onAbort = () => finish({ error: interruptedError() });
  const timer = setTimeout(
    () =>
      finish({
        error: new ClientError(
          "login_timeout",
          `No answer from the browser within ${Math.round((options.timeoutMs ?? LOGIN_TIMEOUT_MS) / 1000)} s.`,
          "Start the sign-in again; on a remote machine sign in with a device code.",
        ),
      }),
    options.timeoutMs ?? LOGIN_TIMEOUT_MS,
  );
  timer.unref();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}${LOOPBACK_CALLBACK_PATH}`,
    code,
    close: () => finish({ error: interruptedError() }),
  };
}

export interface BrowserLoginOptions {
  baseUrl: string;
  /** Opens the URL in a browser; false when none could be opened (the URL is then printed). */
  openUrl: (url: string) => Promise<boolean>;
  /** Told the URL to show, and whether a browser was opened. */
  onAuthorizeUrl: (url: string, opened: boolean) => void;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export async function loginWithBrowser(options: BrowserLoginOptions): Promise<TokenResponse> {
  const { verifier, challenge } = createPkcePair();
  const state = randomBytes(16).toString("base64url");
  const listener = await startLoopbackListener(state, {
    timeoutMs: options.timeoutMs ?? LOGIN_TIMEOUT_MS,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const url = authorizeUrl(options.baseUrl, {
    redirectUri: listener.redirectUri,
    challenge,
    state,
  });
  const opened = await options.openUrl(url).catch(() => false);
  options.onAuthorizeUrl(url, opened);
  const code = await listener.code;
  return exchangeCode(
    options.baseUrl,
    { code, redirectUri: listener.redirectUri, verifier },
    options.signal,
  );
}

/**
 * Opens `url` in the system browser. `BROWSER=none` (or an SSH session without a display)
 * opens nothing; `BROWSER=cmd` runs that command. Resolves false when nothing could be opened.
 */
export function openSystemBrowser(
  url: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  if (env.BROWSER !== undefined) {
    if (env.BROWSER === "" || env.BROWSER === "none") return Promise.resolve(false);
    return startDetached(env.BROWSER, [url]);
  }
  const command = systemOpenCommand();
  if (command === "xdg-open" && !env.DISPLAY && !env.WAYLAND_DISPLAY) return Promise.resolve(false);
  return startDetached(command, [url]);
}

/** Why the browser flow would not work here (an SSH session, no terminal), or undefined. */
export function remoteTerminalReason(
  env: NodeJS.ProcessEnv,
  tty: { stdin: boolean; stdout: boolean },
): string | undefined {
  if (env.SSH_CONNECTION || env.SSH_CLIENT || env.SSH_TTY) return "this looks like an SSH session";
  if (!tty.stdin || !tty.stdout) return "this is not an interactive terminal";
  return undefined;
}

export function isTruthyEnv(value: string | undefined): boolean {
  return value !== undefined && !/^(|0|false|no|off)$/i.test(value.trim());
}

/** Why the device flow is refused here (CI, no terminal), or undefined. */
export function deviceLoginRefusal(
  env: NodeJS.ProcessEnv,
  tty: { stdin: boolean; stdout: boolean },
): string | undefined {
  if (isTruthyEnv(env.CI)) return "CI is set: nobody is there to enter the code";
  if (!tty.stdin || !tty.stdout) return "stdin or stdout is not a terminal";
  return undefined;
}

// ---------------------------------------------------------------- device sign-in

export async function requestDeviceCode(
  baseUrl: string,
  signal?: AbortSignal,
): Promise<DeviceAuthorization> {
  const authorization = await oauthPost(
    baseUrl,
    OAUTH_PATHS.deviceCode,
    { client_id: CLI_CLIENT_ID, scope: DEFAULT_SCOPE },
    deviceAuthorizationSchema,
    signal,
  );
  registerSecret(authorization.device_code);
  return authorization;
}

export interface DeviceLoginOptions {
  baseUrl: string;
  /** Show the person the URL and the code. */
  onCode: (authorization: DeviceAuthorization) => void;
  /** Told each wait before a poll, in ms (after slow_down it grows by 5 s). */
  onWait?: (ms: number) => void;
  sleep?: Sleep;
  now?: () => number;
  signal?: AbortSignal;
}

/** Polls the token endpoint honouring `interval` and `slow_down` until approved or refused. */
export async function loginWithDevice(options: DeviceLoginOptions): Promise<TokenResponse> {
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  const authorization = await requestDeviceCode(options.baseUrl, options.signal);
  options.onCode(authorization);
  const deadline = now() + authorization.expires_in * 1000;
  let intervalMs = authorization.interval * 1000;
  for (;;) {
    options.onWait?.(intervalMs);
    await sleep(intervalMs, options.signal);
    if (now() > deadline) {
      throw new ClientError(
        "expired_token",
        "The code expired before it was approved.",
        HINTS.expired_token,
      );
    }
    try {
      return remember(
        await oauthPost(
          options.baseUrl,
          OAUTH_PATHS.token,
          {
            grant_type: DEVICE_CODE_GRANT,
            device_code: authorization.device_code,
            client_id: CLI_CLIENT_ID,
          },
          tokenResponseSchema,
          options.signal,
        ),
      );
    } catch (error) {
      if (!(error instanceof ClientError)) throw error;
      if (error.code === "authorization_pending") continue;
      if (error.code === "slow_down") {
        intervalMs += 5_000;
        continue;
      }
      throw error;
    }
  }
}

// ---------------------------------------------------------------- saving and refreshing

/**
 * Checks new tokens against /v3/users/me, then stores them with the identity. When the check
 * fails the tokens are revoked and nothing is stored.
 */
export async function saveSignIn(
  backend: CredentialBackend,
  baseUrl: string,
  tokens: TokenResponse,
  options: { userAgent?: string; now?: () => number } = {},
): Promise<UserRecord> {
  let user: UserRecord;
  try {
    user = await new ApiClient({
      baseUrl,
      credential: tokens.access_token,
      retryLimit: 1,
      ...(options.userAgent ? { userAgent: options.userAgent } : {}),
    }).me();
  } catch (error) {
    await revokeToken(baseUrl, tokens.refresh_token).catch(() => undefined);
    throw error;
  }
  const oauth = storedTokens(tokens, (options.now ?? Date.now)());
  await backend.update((current) => ({
    ...current,
    oauth,
    user: { email: user.email, username: user.username },
  }));
  return user;
}

/** Refreshes running in this process, by lock file and service: joined, never doubled. */
const refreshesInFlight = new Map<string, Promise<string | undefined>>();

/**
 * The credential options of an ApiClient for a store's credential: an API key as it is, an OAuth
 * sign-in as a fresh access token plus the 401 hook that refreshes it (then the client replays).
 */
export async function apiCredential(
  credential: { secret: string } | undefined,
  oauth: OAuthSession | undefined,
): Promise<{
  credential: string | undefined;
  refreshCredential?: () => Promise<string | undefined>;
}> {
  let secret = credential?.secret;
  if (!oauth) return { credential: secret };
  secret = (await oauth.accessToken()) ?? secret;
  return {
    credential: secret,
    refreshCredential: async () => {
      const fresh = await oauth.forceRefresh(secret);
      if (fresh) secret = fresh;
      return fresh;
    },
  };
}

/**
 * The OAuth credential of a store: a fresh access token (refreshed `REFRESH_SKEW_SECONDS`
 * before expiry), and a forced refresh for the API client's 401 hook. A refresh is single
 * flight in this process (every session on the same store joins the one running) and holds the
 * store's lock file against other svc processes; with the lock it re-reads the store first,
 * because another process may already have rotated the tokens (presenting the old refresh
 * token again would revoke the sign-in) — then it uses those.
 */
export class OAuthSession {
  /** How many refreshes this session made (for `svc auth refresh` and tests). */
  refreshCount = 0;

  constructor(
    private readonly backend: CredentialBackend,
    private readonly baseUrl: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The access token to use now, refreshing first when it is about to expire. */
  async accessToken(): Promise<string | undefined> {
    const oauth = (await this.backend.read()).oauth;
    if (!oauth) return undefined;
    registerSecret(oauth.access_token);
    if (this.isFresh(oauth)) return oauth.access_token;
    return this.refresh(oauth.access_token);
  }

  /** After a 401 with `rejected`: a new access token, or undefined when there is none. */
  forceRefresh(rejected?: string): Promise<string | undefined> {
    return this.refresh(rejected);
  }

  private isFresh(oauth: OAuthTokens): boolean {
    return oauth.expires_at - REFRESH_SKEW_SECONDS > this.now() / 1000;
  }

  private refresh(rejected: string | undefined): Promise<string | undefined> {
    const key = `${this.backend.lockFile}\n${this.baseUrl}`;
    let running = refreshesInFlight.get(key);
    if (!running) {
      running = withCredentialLock(this.backend.lockFile, () => this.refreshLocked(rejected));
      refreshesInFlight.set(key, running);
      const forget = () => refreshesInFlight.delete(key);
      running.then(forget, forget);
    }
    return running;
  }

  private async refreshLocked(rejected: string | undefined): Promise<string | undefined> {
    const oauth = (await this.backend.read()).oauth;
    if (!oauth?.refresh_token) return undefined;
    registerSecret(oauth.access_token);
    // Another process refreshed while this one waited for the lock: its tokens are ours too.
    if (rejected !== undefined && oauth.access_token !== rejected && this.isFresh(oauth)) {
      return oauth.access_token;
    }
    let tokens: TokenResponse;
    try {
      tokens = await refreshTokens(this.baseUrl, oauth.refresh_token);
    } catch (error) {
      if (error instanceof ClientError && error.code === "invalid_grant") {
        throw new ClientError(
          "authentication_failed",
          "The sign-in has expired or was revoked.",
          "Sign in again.",
          { status: 401, cause: error, params: { credential: "oauth" } },
        );
      }
      throw error;
    }
    this.refreshCount++;
    const stored = storedTokens(tokens, this.now());
    await this.backend.update((current) => ({ ...current, oauth: stored }));
    return tokens.access_token;
  }
}

export interface SignOutResult {
  /** True when the service revoked an OAuth sign-in. */
  revoked: boolean;
  /** True when something was removed from the store. */
  removed: boolean;
  location: string;
  /** Why the revocation failed (the local copy is removed anyway). */
  revokeError?: string;
}

/**
 * Sign-out for the CLI and the app: revokes the OAuth sign-in on the service, then removes
 * `oauth`, `user` and (unless `keepApiKey`) `api_key` from the store; other keys stay. A failed
 * revocation is reported, and the local copy is removed anyway.
 */
export async function signOut(
  backend: CredentialBackend,
  options: { keepApiKey: boolean; revoke: (refreshToken: string) => Promise<void> },
): Promise<SignOutResult> {
  const stored = await backend.read();
  let revoked = false;
  let revokeError: string | undefined;
  if (stored.oauth?.refresh_token) {
    try {
      await options.revoke(stored.oauth.refresh_token);
      revoked = true;
    } catch (error) {
      revokeError = error instanceof Error ? error.message : String(error);
    }
  }
  const hasApiKey = stored.api_key !== undefined && !options.keepApiKey;
  const removed = stored.oauth !== undefined || hasApiKey;
  const location = backend.location;
  if (removed) {
    await backend.update((current) => {
      const { oauth: _oauth, user, api_key, ...rest } = current;
      return options.keepApiKey && api_key !== undefined
        ? { ...rest, api_key, ...(user ? { user } : {}) }
        : rest;
    });
  }
  return { revoked, removed, location, ...(revokeError ? { revokeError } : {}) };
}
