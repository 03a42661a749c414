// The JSON endpoints of the authorization server: `POST /v1/oauth/token` (authorization_code,
// refresh_token, device_code), `POST /v1/oauth/device/code` and `POST /v1/oauth/revoke`. They
// take form bodies (RFC 6749) or JSON, answer RFC-shaped errors `{error, error_description}`
// (not the /v3 envelope, which OAuth clients do not understand) and are never cached. A client
// address that sent too many refused grants (codes, refresh tokens, device codes: secrets) shares
// the /v3 failed-credential throttle, and device codes are limited per address: both answer 429
// `temporarily_unavailable` with Retry-After.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { OAUTH_PATHS } from "../../shared/oauth";
import type { FailedCredentialThrottle } from "../http/failed-credentials";
import type { SharedWindowCounter } from "../http/rate-limit";
import { OAuthError } from "./authorize-request";
import type { AuthorizationServer } from "./grants";

/** Refused grants that mean a wrong or stale secret, counted as failed credentials. */
const FAILED_GRANTS = new Set(["invalid_grant", "invalid_client", "expired_token"]);

export interface OAuthLimits {
  failures: FailedCredentialThrottle;
  /** Device codes per client address; undefined: not limited. */
  deviceCodes: { counter: SharedWindowCounter; max: number } | undefined;
}

function throttled(seconds: number, message: string): OAuthError {
  return new OAuthError("temporarily_unavailable", message, 429, {
    "retry-after": String(seconds),
  });
}

const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };

/** Parses application/x-www-form-urlencoded bodies into a plain object (last value wins). */
export function addFormParser(instance: FastifyInstance): void {
  instance.addContentTypeParser(
    "application/x-www-form-urlencoded",
    { parseAs: "string", bodyLimit: 64 * 1024 },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );
}

/** Where the service is reached, for `verification_uri`: SVC_SERVER_PUBLIC_URL or the Host. */
function publicBaseUrl(request: FastifyRequest): string {
  const configured = process.env.SVC_SERVER_PUBLIC_URL?.replace(/\/+$/, "");
  if (configured) return configured;
  return `${request.protocol}://${request.headers.host ?? request.hostname}`;
}

function bodyOf(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  return body && typeof body === "object" && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : {};
}

function sendOAuthError(reply: FastifyReply, error: OAuthError): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  if (error.status === 401)
    reply.header("www-authenticate", 'Basic realm="svc", error="invalid_client"');
  return reply
    .code(error.status)
    .headers(NO_STORE)
    .send({ error: error.code, error_description: error.message });
}

export function registerOAuthRoutes(
  app: FastifyInstance,
  oauth: AuthorizationServer,
  limits: OAuthLimits,
): void {
  void app.register(async (endpoints) => {
    addFormParser(endpoints);
    endpoints.setErrorHandler((error, request, reply) => {
      if (error instanceof OAuthError) return sendOAuthError(reply, error);
      const status = (error as { statusCode?: number }).statusCode ?? 500;
      if (status >= 400 && status < 500) {
        return sendOAuthError(
          reply,
          new OAuthError("invalid_request", "the request body is not valid"),
        );
      }
      request.log.error({ err: error }, "oauth endpoint failed");
      return sendOAuthError(
        reply,
        new OAuthError("server_error", "the service hit an internal error; try again", 500),
      );
    });

    endpoints.post(OAUTH_PATHS.token, async (request, reply) => {
      const wait = await limits.failures.check(request.ip);
      if (wait) {
        throw throttled(
          wait.retryAfterSeconds,
          `too many refused grants from this address; retry in ${wait.retryAfterSeconds} s`,
        );
      }
      try {
        const tokens = await oauth.token(bodyOf(request));
        return reply.headers(NO_STORE).send(tokens);
      } catch (error) {
        if (error instanceof OAuthError && FAILED_GRANTS.has(error.code)) {
          await limits.failures.recordFailure(request.ip);
        }
        throw error;
      }
    });

    endpoints.post(OAUTH_PATHS.deviceCode, async (request, reply) => {
      if (limits.deviceCodes) {
        const counted = await limits.deviceCodes.counter.count(`device-codes:${request.ip}`);
        if (counted.current > limits.deviceCodes.max) {
          const seconds = Math.max(1, Math.ceil(counted.ttl / 1000));
          throw throttled(
            seconds,
            `too many device codes from this address; finish a sign-in already started, or retry in ${seconds} s`,
          );
        }
      }
      const authorization = await oauth.createDeviceAuthorization(
        bodyOf(request),
        publicBaseUrl(request),
      );
      return reply.headers(NO_STORE).send(authorization);
    });

    endpoints.post(OAUTH_PATHS.revoke, async (_request, reply) => {
      await oauth.revoke(bodyOf(_request));
      // RFC 7009 section 2.2: 200 whether or not the token was known.
      return reply.headers(NO_STORE).send({});
    });
  });
}
