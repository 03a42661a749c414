// Tokens as the database keeps them: every access and refresh token random (240 bits) and stored
// as a SHA-256 hash (oauth-repository.ts), in families (one sign-in) that are revoked as a whole;
// and the lifetimes of codes and tokens from the service's configuration.
import { ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX, type TokenResponse } from "../../shared/oauth";
import type { ServerConfig } from "../config";
import type { Database } from "../db/database";
import { newId, randomToken } from "../ids";
import { hashSecret } from "./authorize-request";
import { insertTokens } from "./oauth-repository";

export interface OAuthSettings {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  authorizationCodeTtlSeconds: number;
  deviceCodeTtlSeconds: number;
  devicePollIntervalSeconds: number;
}

export function oauthSettings(config: ServerConfig): OAuthSettings {
  return {
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
    authorizationCodeTtlSeconds: config.authorizationCodeTtlSeconds,
    deviceCodeTtlSeconds: config.deviceCodeTtlSeconds,
    devicePollIntervalSeconds: config.devicePollIntervalSeconds,
  };
}

export async function issueTokens(
  db: Database,
  settings: OAuthSettings,
  grant: { userId: string; clientId: string; scope: string; familyId: string; now: number },
): Promise<TokenResponse> {
  const accessToken = `${ACCESS_TOKEN_PREFIX}${randomToken(40)}`;
  const refreshToken = `${REFRESH_TOKEN_PREFIX}${randomToken(40)}`;
  const common = {
    family_id: grant.familyId,
    user_id: grant.userId,
    client_id: grant.clientId,
    scope: grant.scope,
    created_ms: grant.now,
    rotated_ms: null,
    revoked_ms: null,
  };
  await insertTokens(db, [
    {
      ...common,
      id: newId("tok_"),
      token_hash: hashSecret(accessToken),
      kind: "access",
      expires_ms: grant.now + settings.accessTokenTtlSeconds * 1000,
    },
    {
      ...common,
      id: newId("tok_"),
      token_hash: hashSecret(refreshToken),
      kind: "refresh",
      expires_ms: grant.now + settings.refreshTokenTtlSeconds * 1000,
    },
  ]);
  return {
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: settings.accessTokenTtlSeconds,
    refresh_token: refreshToken,
    scope: grant.scope,
  };
}
