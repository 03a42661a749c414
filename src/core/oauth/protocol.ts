// The OAuth protocol as the public client `svc-cli` speaks it (SPEC.md section 5): PKCE, the
// authorize URL, and the token, refresh and revoke calls. Decisions: token requests are never
// retried (a replayed refresh would look like reuse and revoke the sign-in); every token is
// registered as a secret so no message can print it.
import { createHash, randomBytes } from "node:crypto";
import got from "got";
import { z } from "zod";
import {
  CLI_CLIENT_ID,
  DEFAULT_SCOPE,
  OAUTH_PATHS,
  oauthErrorSchema,
  tokenResponseSchema,
  type TokenResponse,
} from "../../shared/oauth";
import type { OAuthTokens, StoredCredentials } from "../credentials";
import { ClientError, interruptedError, registerSecret } from "../errors";

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
export const HINTS: Record<string, string> = {
  access_denied: "The sign-in was denied in the browser; start the sign-in again to retry.",
  expired_token: "The code expired before it was approved; start the device sign-in again.",
  invalid_grant: "The sign-in is no longer valid; sign in again.",
  temporarily_unavailable:
    "The service refuses sign-ins from this address for a while after too many attempts; wait and try again.",
};

/** One POST to an OAuth endpoint: form body, no retries, RFC errors as ClientErrors. */
export async function oauthPost<T extends z.ZodType>(
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

export function remember(tokens: TokenResponse): TokenResponse {
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
