// The OAuth requests of the authorization server (SPEC.md section 5) before any grant: the RFC
// error, request parameters, the one public client `svc-cli`, PKCE S256 (RFC 7636), the device
// flow's user codes, and the authorization request of the code flow with loopback redirect URIs
// (RFC 8252) checked before the consent page. Secrets are stored as SHA-256 hashes (hashSecret).
import { createHash } from "node:crypto";
import {
  CLI_CLIENT_ID,
  DEFAULT_SCOPE,
  isLoopbackRedirectUri,
  type OAuthErrorCode,
} from "../../shared/oauth";
import { randomToken } from "../ids";

/** An RFC error: `error` code, description and HTTP status (400, or 401 for invalid_client). */
export class OAuthError extends Error {
  override readonly name = "OAuthError";
  constructor(
    readonly code: OAuthErrorCode,
    message: string,
    readonly status = code === "invalid_client" ? 401 : 400,
    /** More response headers, e.g. Retry-After of a throttled address. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** base64url(SHA-256(verifier)): the only PKCE transformation accepted (S256). */
export function s256(verifier: string): string {
  return createHash("sha256").update(verifier).digest("base64url");
}

/** RFC 7636 section 4.1: 43 to 128 unreserved characters. */
export const VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;
const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** User codes: 8 consonants (no vowels, so no words; no look-alikes), shown as XXXX-XXXX. */
const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";

export function normaliseUserCode(input: string): string {
  return input.toUpperCase().replace(/[^A-Z]/g, "");
}

export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

export function newUserCode(): string {
  let code = "";
  while (code.length < 8) {
    for (const char of randomToken(16)) {
      if (USER_CODE_ALPHABET.includes(char.toUpperCase()) && code.length < 8) {
        code += char.toUpperCase();
      }
    }
  }
  return code;
}

/** A validated authorization request: what the consent form carries and the code remembers. */
export interface AuthorizeRequest {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  scope: string;
  state: string | undefined;
}

export type AuthorizeValidation =
  /** Do not redirect anywhere: the client or redirect URI cannot be trusted (RFC 6749 4.1.2.1). */
  | { kind: "show_error"; error: OAuthError }
  /** Send the error back to the client's redirect URI with the state. */
  | { kind: "redirect_error"; redirectUri: string; state: string | undefined; error: OAuthError }
  | { kind: "ok"; request: AuthorizeRequest };

export type Params = Record<string, unknown>;

export function param(params: Params, name: string): string | undefined {
  const value = params[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

export function requireParam(params: Params, name: string): string {
  const value = param(params, name);
  if (value === undefined) throw new OAuthError("invalid_request", `${name} is required`);
  return value;
}

export function checkClient(params: Params): string {
  const clientId = param(params, "client_id");
  if (clientId === undefined) throw new OAuthError("invalid_client", "client_id is required");
  if (clientId !== CLI_CLIENT_ID)
    throw new OAuthError("invalid_client", `unknown client_id "${clientId.slice(0, 64)}"`);
  return clientId;
}

/**
 * The one scope this server grants, whatever was asked: clients of this API shape ask for
 * `openid profile email`, and RFC 6749 section 3.3 lets a server grant less than it was asked
 * for as long as the token response says what it granted (its `scope` is always "api"). So no
 * requested scope is refused, and the request's `scope` is not read.
 */
export const GRANTED_SCOPE = DEFAULT_SCOPE;

export function validateAuthorizeRequest(params: Params): AuthorizeValidation {
  const clientId = param(params, "client_id");
  if (clientId !== CLI_CLIENT_ID) {
    return {
      kind: "show_error",
      error: new OAuthError(
        "invalid_request",
        clientId === undefined ? "client_id is required" : "unknown client_id",
      ),
    };
  }
  const redirectUri = param(params, "redirect_uri");
  if (redirectUri === undefined || !isLoopbackRedirectUri(redirectUri)) {
    return {
      kind: "show_error",
      error: new OAuthError(
        "invalid_request",
        "redirect_uri must be http://127.0.0.1:<port>/oauth/callback or http://[::1]:<port>/oauth/callback",
      ),
    };
  }
  const state = param(params, "state");
  const fail = (error: OAuthError): AuthorizeValidation => ({
    kind: "redirect_error",
    redirectUri,
    state,
    error,
  });
  if (param(params, "response_type") !== "code") {
    return fail(new OAuthError("unsupported_response_type", 'response_type must be "code"'));
  }
  const challenge = param(params, "code_challenge");
  const method = param(params, "code_challenge_method");
  if (challenge === undefined) {
    return fail(new OAuthError("invalid_request", "code_challenge is required (PKCE S256)"));
  }
  if (method !== "S256") {
    return fail(
      new OAuthError("invalid_request", 'code_challenge_method must be "S256"; plain is refused'),
    );
  }
  if (!CHALLENGE_PATTERN.test(challenge)) {
    return fail(
      new OAuthError("invalid_request", "code_challenge must be 43 base64url characters"),
    );
  }
  if (state !== undefined && state.length > 512) {
    return fail(new OAuthError("invalid_request", "state is too long"));
  }
  return {
    kind: "ok",
    request: { clientId, redirectUri, codeChallenge: challenge, scope: GRANTED_SCOPE, state },
  };
}
