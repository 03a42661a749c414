// The OAuth 2.0 wire format of the render service (SPEC.md section 5): the public client id,
// the endpoint paths, token / device-authorization answers and RFC error codes. The service
// answers with these and the client core parses with them, so a field is named once.
import { z } from "zod";

/** The one public client: the CLI and the desktop app sign in as `svc-cli`. */
export const CLI_CLIENT_ID = "svc-cli";
export const DEFAULT_SCOPE = "api";

export const OAUTH_PATHS = {
  authorize: "/oauth/authorize",
  token: "/v1/oauth/token",
  deviceCode: "/v1/oauth/device/code",
  device: "/device",
  revoke: "/v1/oauth/revoke",
} as const;

/** Where the loopback listener of a native client receives the code (RFC 8252 section 7.3). */
export const LOOPBACK_CALLBACK_PATH = "/oauth/callback";

export const ACCESS_TOKEN_PREFIX = "svc_at_";
export const REFRESH_TOKEN_PREFIX = "svc_rt_";

export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

/**
 * Error codes of RFC 6749 section 5.2, RFC 8628 section 3.5 and RFC 7009, and RFC 6749's
 * `temporarily_unavailable` for an address throttled after failed grants or too many device codes.
 */
export const OAUTH_ERROR_CODES = [
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "unsupported_response_type",
  "invalid_scope",
  "access_denied",
  "authorization_pending",
  "slow_down",
  "expired_token",
  "unsupported_token_type",
  "server_error",
  "temporarily_unavailable",
] as const;
export type OAuthErrorCode = (typeof OAUTH_ERROR_CODES)[number];

export const oauthErrorSchema = z.object({
  error: z.string(),
  error_description: z.string().optional(),
});

export const tokenResponseSchema = z.object({
  access_token: z.string().min(1),
  token_type: z.string(),
  expires_in: z.number().int().nonnegative(),
  refresh_token: z.string().min(1),
  scope: z.string(),
});
export type TokenResponse = z.infer<typeof tokenResponseSchema>;

export const deviceAuthorizationSchema = z.object({
  device_code: z.string().min(1),
  user_code: z.string().min(1),
  verification_uri: z.string(),
  verification_uri_complete: z.string().optional(),
  expires_in: z.number().int().positive(),
  interval: z.number().int().positive().default(5),
});
export type DeviceAuthorization = z.infer<typeof deviceAuthorizationSchema>;

/**
 * True for `http://127.0.0.1:<port>/oauth/callback` and `http://[::1]:<port>/oauth/callback`
 * (RFC 8252 section 7.3: loopback IP literals, any port, plain http). `localhost` is refused: it
 * may resolve elsewhere, and the client never listens on it.
 */
export function isLoopbackRedirectUri(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (
    url.protocol === "http:" &&
    (url.hostname === "127.0.0.1" || url.hostname === "[::1]") &&
    url.port !== "" &&
    url.username === "" &&
    url.password === "" &&
    url.pathname === LOOPBACK_CALLBACK_PATH &&
    url.search === "" &&
    url.hash === ""
  );
}
