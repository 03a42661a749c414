// A stored OAuth sign-in over time: tokens are saved only after /v3/users/me accepted them
// (otherwise they are revoked); the access token is refreshed REFRESH_SKEW_SECONDS before it
// expires, and once on a 401, once per store however many requests or processes need it (single
// flight + credential-lock.ts); sign-out revokes on the service, then forgets locally.
import { type TokenResponse } from "../../shared/oauth";
import type { UserRecord } from "../../shared/api";
import { ApiClient } from "../api-client";
import { withCredentialLock } from "../credential-lock";
import type { OAuthTokens } from "../credentials";
import { ClientError, registerSecret } from "../errors";
import {
  REFRESH_SKEW_SECONDS,
  refreshTokens,
  revokeToken,
  storedTokens,
  type CredentialBackend,
} from "./protocol";

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
