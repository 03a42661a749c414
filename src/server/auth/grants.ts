// The OAuth 2.0 grants of SPEC.md section 5 (AuthorizationServer), for the one public client
// `svc-cli`: authorization code + PKCE S256 (RFC 6749, 7636, 8252), refresh tokens rotated on
// every use with reuse detection (a rotated token presented again revokes its whole family), the
// device authorization grant (RFC 8628), revocation (RFC 7009) and access-token checks. The
// request checks are authorize-request.ts, token storage token-store.ts, the queries
// oauth-repository.ts; the HTTP shapes are in
// oauth-routes.ts (JSON endpoints) and auth-pages.ts (the pages a person sees).
import { sameSecret } from "../../node/index";
import {
  ACCESS_TOKEN_PREFIX,
  DEVICE_CODE_GRANT,
  OAUTH_PATHS,
  type DeviceAuthorization,
  type TokenResponse,
} from "../../shared/oauth";
import type { Principal } from "./accounts";
import type { Database } from "../db/database";
import { newId, randomToken } from "../ids";
import {
  GRANTED_SCOPE,
  OAuthError,
  VERIFIER_PATTERN,
  checkClient,
  formatUserCode,
  hashSecret,
  newUserCode,
  normaliseUserCode,
  param,
  requireParam,
  s256,
  type AuthorizeRequest,
  type Params,
} from "./authorize-request";
import { issueTokens, type OAuthSettings } from "./token-store";
import {
  decideDeviceCode,
  deleteExpired,
  findCode,
  findDeviceCode,
  findPendingDeviceCode,
  findRefreshToken,
  findTokenAccount,
  insertCode,
  insertDeviceCode,
  markCodeUsed,
  markDeviceCodeUsed,
  markRotated,
  recordDevicePoll,
  revokeFamilyTokens,
  tokenFamily,
} from "./oauth-repository";

/** RFC 8628 section 3.5: each slow_down adds 5 seconds to the interval. */
const SLOW_DOWN_STEP_SECONDS = 5;
/** A poll this much early still counts as on time: client timers and latency jitter. */
const POLL_JITTER_MS = 250;

/** How long a checked access token is trusted without reading the database again. */
const ACCESS_TOKEN_CACHE_MS = 5_000;

export class AuthorizationServer {
  /**
   * Access tokens checked in the last few seconds, by hash: a client polling several times a
   * second costs one lookup per few seconds. Every revocation in this process forgets its
   * family's entries at once; one made by another process over the same database shows within
   * ACCESS_TOKEN_CACHE_MS.
   */
  private readonly accessTokens = new Map<
    string,
    { principal: Principal; familyId: string; until: number }
  >();

  constructor(
    private readonly db: Database,
    private readonly settings: OAuthSettings,
    private readonly now: () => number = Date.now,
  ) {}

  private async revokeFamily(db: Database, familyId: string, now: number): Promise<void> {
    await revokeFamilyTokens(db, familyId, now);
    for (const [hash, entry] of this.accessTokens) {
      if (entry.familyId === familyId) this.accessTokens.delete(hash);
    }
  }

  /**
   * Deletes what can no longer be used: codes, device codes and tokens a day past expiry (kept
   * that long so a late reuse still gets a precise error). Runs when new sign-ins start.
   */
  private async purgeExpired(now: number): Promise<void> {
    await deleteExpired(this.db, now - 86_400_000);
  }

  /** Creates a single-use code for an approved request; returns the plaintext code. */
  async issueCode(userId: string, request: AuthorizeRequest): Promise<string> {
    const code = randomToken(40);
    const now = this.now();
    await this.purgeExpired(now);
    await insertCode(this.db, {
      code_hash: hashSecret(code),
      client_id: request.clientId,
      user_id: userId,
      redirect_uri: request.redirectUri,
      code_challenge: request.codeChallenge,
      scope: request.scope,
      created_ms: now,
      expires_ms: now + this.settings.authorizationCodeTtlSeconds * 1000,
      used_ms: null,
      family_id: null,
    });
    return code;
  }

  /** POST /v1/oauth/token: dispatches on grant_type. */
  async token(params: Params): Promise<TokenResponse> {
    const grantType = param(params, "grant_type");
    if (grantType === undefined) throw new OAuthError("invalid_request", "grant_type is required");
    checkClient(params);
    switch (grantType) {
      case "authorization_code":
        return this.exchangeCode(params);
      case "refresh_token":
        return this.refresh(params);
      case DEVICE_CODE_GRANT:
        return this.pollDevice(params);
      default:
        throw new OAuthError(
          "unsupported_grant_type",
          `grant_type "${grantType.slice(0, 80)}" is not supported`,
        );
    }
  }

  private async exchangeCode(params: Params): Promise<TokenResponse> {
    const code = requireParam(params, "code");
    const redirectUri = requireParam(params, "redirect_uri");
    const verifier = param(params, "code_verifier");
    if (verifier === undefined) {
      throw new OAuthError("invalid_request", "code_verifier is required (PKCE)");
    }
    const clientId = checkClient(params);
    const now = this.now();
    // Errors are returned, not thrown, so the revocation of a reused code's family commits.
    const outcome = await this.db.transaction().execute(async (trx) => {
      const fail = (error: OAuthError) => ({ error, tokens: undefined });
      const row = await findCode(trx, hashSecret(code));
      if (!row) return fail(new OAuthError("invalid_grant", "the authorization code is not valid"));
      if (row.used_ms !== null) {
        // RFC 6749 section 4.1.2: a code used twice revokes what it was exchanged for.
        if (row.family_id) await this.revokeFamily(trx, row.family_id, now);
        return fail(new OAuthError("invalid_grant", "the authorization code was already used"));
      }
      if (row.expires_ms <= now)
        return fail(new OAuthError("invalid_grant", "the authorization code has expired"));
      if (row.client_id !== clientId || row.redirect_uri !== redirectUri) {
        return fail(
          new OAuthError(
            "invalid_grant",
            "redirect_uri or client_id differs from the authorization request",
          ),
        );
      }
      if (!VERIFIER_PATTERN.test(verifier) || !sameSecret(row.code_challenge, s256(verifier))) {
        return fail(
          new OAuthError("invalid_grant", "code_verifier does not match the code_challenge"),
        );
      }
      const familyId = newId("fam_");
      if (!(await markCodeUsed(trx, row.code_hash, familyId, now))) {
        return fail(new OAuthError("invalid_grant", "the authorization code was already used"));
      }
      const tokens = await issueTokens(trx, this.settings, {
        userId: row.user_id,
        clientId,
        scope: row.scope,
        familyId,
        now,
      });
      return { error: undefined, tokens };
    });
    if (outcome.error) throw outcome.error;
    return outcome.tokens!;
  }

  private async refresh(params: Params): Promise<TokenResponse> {
    const refreshToken = requireParam(params, "refresh_token");
    const clientId = checkClient(params);
    const now = this.now();
    // The family is revoked in its own transaction so the refusal below cannot roll it back.
    const outcome = await this.db.transaction().execute(async (trx) => {
      const row = await findRefreshToken(trx, hashSecret(refreshToken));
      if (!row) return { error: new OAuthError("invalid_grant", "the refresh token is not valid") };
      if (row.revoked_ms !== null) {
        return { error: new OAuthError("invalid_grant", "the refresh token was revoked") };
      }
      if (row.rotated_ms !== null) {
        await this.revokeFamily(trx, row.family_id, now);
        return {
          error: new OAuthError(
            "invalid_grant",
            "the refresh token was already used; every token of this sign-in is now revoked",
          ),
        };
      }
      if (row.expires_ms <= now) {
        return { error: new OAuthError("invalid_grant", "the refresh token has expired") };
      }
      if (row.client_id !== clientId) {
        return {
          error: new OAuthError("invalid_grant", "the refresh token belongs to another client"),
        };
      }
      if (!(await markRotated(trx, row.id, now))) {
        await this.revokeFamily(trx, row.family_id, now);
        return { error: new OAuthError("invalid_grant", "the refresh token was already used") };
      }
      const tokens = await issueTokens(trx, this.settings, {
        userId: row.user_id,
        clientId,
        scope: row.scope,
        familyId: row.family_id,
        now,
      });
      return { tokens };
    });
    if (outcome.error) throw outcome.error;
    return outcome.tokens!;
  }

  async createDeviceAuthorization(params: Params, baseUrl: string): Promise<DeviceAuthorization> {
    const clientId = checkClient(params);
    const scope = GRANTED_SCOPE;
    const deviceCode = randomToken(40);
    const now = this.now();
    await this.purgeExpired(now);
    const userCode = newUserCode();
    await insertDeviceCode(this.db, {
      id: newId("dev_"),
      device_code_hash: hashSecret(deviceCode),
      user_code: userCode,
      client_id: clientId,
      scope,
      status: "pending",
      user_id: null,
      interval_seconds: this.settings.devicePollIntervalSeconds,
      last_poll_ms: null,
      created_ms: now,
      expires_ms: now + this.settings.deviceCodeTtlSeconds * 1000,
    });
    const verificationUri = `${baseUrl}${OAUTH_PATHS.device}`;
    return {
      device_code: deviceCode,
      user_code: formatUserCode(userCode),
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?user_code=${formatUserCode(userCode)}`,
      expires_in: this.settings.deviceCodeTtlSeconds,
      interval: this.settings.devicePollIntervalSeconds,
    };
  }

  private async pollDevice(params: Params): Promise<TokenResponse> {
    const deviceCode = requireParam(params, "device_code");
    const clientId = checkClient(params);
    const now = this.now();
    const outcome = await this.db.transaction().execute(async (trx) => {
      const row = await findDeviceCode(trx, hashSecret(deviceCode));
      if (!row || row.client_id !== clientId) {
        return { error: new OAuthError("invalid_grant", "the device code is not valid") };
      }
      if (row.expires_ms <= now) {
        return {
          error: new OAuthError("expired_token", "the device code has expired; start again"),
        };
      }
      if (row.status === "used") {
        return { error: new OAuthError("invalid_grant", "the device code was already used") };
      }
      if (
        row.last_poll_ms !== null &&
        now - row.last_poll_ms < row.interval_seconds * 1000 - POLL_JITTER_MS
      ) {
        const interval = row.interval_seconds + SLOW_DOWN_STEP_SECONDS;
        await recordDevicePoll(trx, row.id, now, interval);
        return {
          error: new OAuthError("slow_down", `polling too fast; wait ${interval} s between polls`),
        };
      }
      await recordDevicePoll(trx, row.id, now);
      if (row.status === "pending") {
        return {
          error: new OAuthError("authorization_pending", "waiting for the user to approve"),
        };
      }
      if (row.status === "denied") {
        return { error: new OAuthError("access_denied", "the user denied the request") };
      }
      if (!(await markDeviceCodeUsed(trx, row.id)) || !row.user_id) {
        return { error: new OAuthError("invalid_grant", "the device code was already used") };
      }
      const tokens = await issueTokens(trx, this.settings, {
        userId: row.user_id,
        clientId,
        scope: row.scope,
        familyId: newId("fam_"),
        now,
      });
      return { tokens };
    });
    if (outcome.error) throw outcome.error;
    return outcome.tokens!;
  }

  /** A device code waiting for a person, by the code they typed (any case, with or without dash). */
  async findPendingDeviceCode(
    typed: string,
  ): Promise<{ userCode: string; clientId: string; scope: string } | undefined> {
    const userCode = normaliseUserCode(typed);
    if (userCode.length !== 8) return undefined;
    const row = await findPendingDeviceCode(this.db, userCode, this.now());
    return row ? { userCode: row.user_code, clientId: row.client_id, scope: row.scope } : undefined;
  }

  /** Records the person's answer; false when the code is no longer pending. */
  async decideDeviceCode(typed: string, userId: string, approve: boolean): Promise<boolean> {
    return decideDeviceCode(this.db, normaliseUserCode(typed), {
      approve,
      userId,
      now: this.now(),
    });
  }

  /**
   * RFC 7009: revokes the token and, for either kind, the rest of its family (signing out
   * ends the sign-in, not one token). Unknown tokens are not an error.
   */
  async revoke(params: Params): Promise<void> {
    const token = requireParam(params, "token");
    checkClient(params);
    const hint = param(params, "token_type_hint");
    if (hint !== undefined && hint !== "access_token" && hint !== "refresh_token") {
      throw new OAuthError(
        "unsupported_token_type",
        `token_type_hint "${hint.slice(0, 40)}" is not supported`,
      );
    }
    const familyId = await tokenFamily(this.db, hashSecret(token));
    if (familyId !== undefined) await this.revokeFamily(this.db, familyId, this.now());
  }

  /** The principal of an access token this process accepted moments ago, without a query. */
  cachedAccessToken(token: string): Principal | undefined {
    const cached = this.accessTokens.get(hashSecret(token));
    return cached && cached.until > this.now() ? cached.principal : undefined;
  }

  /**
   * The account behind a live access token, for the /v3 API. `beforeLookup` runs when the token
   * is not in the cache (the failed-credential throttle).
   */
  async authenticateAccessToken(
    token: string,
    beforeLookup?: () => Promise<void>,
  ): Promise<Principal | undefined> {
    if (!token.startsWith(ACCESS_TOKEN_PREFIX)) return undefined;
    const hash = hashSecret(token);
    const now = this.now();
    const cached = this.accessTokens.get(hash);
    if (cached && cached.until > now) return cached.principal;
    await beforeLookup?.();
    const row = await findTokenAccount(this.db, hash);
    if (!row || row.kind !== "access" || row.revoked_ms !== null || row.expires_ms <= now) {
      this.accessTokens.delete(hash);
      return undefined;
    }
    const { family_id, kind: _kind, expires_ms, revoked_ms: _revoked, ...user } = row;
    const principal = { user, credentialId: `oauth:${family_id}` };
    if (this.accessTokens.size > 10_000) this.accessTokens.clear();
    this.accessTokens.set(hash, {
      principal,
      familyId: family_id,
      until: Math.min(now + ACCESS_TOKEN_CACHE_MS, expires_ms),
    });
    return principal;
  }
}
