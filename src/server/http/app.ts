// Fastify wiring of the service: logging with secrets redacted, authentication and rate limit
// for /v3, the routes of each concept, and the one place where errors become
// `{error:{code,message,param}}` responses (never a stack trace).
import Fastify, {
  LogController,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import { randomBytes } from "node:crypto";
import pino, { type LoggerOptions } from "pino";
import { batchedLogger } from "./batched-log";
import { sql } from "kysely";
import { ACCESS_TOKEN_PREFIX } from "../../shared/oauth";
import { ApiKeyAuthenticator } from "../auth/accounts";
import { registerAssetRoutes } from "../assets/assets";
import { registerAuthPages } from "../auth/auth-pages";
import type { ServiceContext } from "../context";
import { fromMilli } from "../render/credits";
import { ApiError, errorBody, internalError, isApiError } from "../errors";
import { credentialOf, principalOf } from "./request";
import { PollLane } from "./poll-lane";
import { AuthorizationServer } from "../auth/grants";
import { oauthSettings } from "../auth/token-store";
import { registerOAuthRoutes } from "../auth/oauth-routes";
import type { JobQueue } from "../queue/job-queue";
import { reconciledCounter, registerRateLimit } from "./rate-limit";
import { FailedCredentialThrottle, throttledMessage } from "./failed-credentials";
import { registerRenderRoutes } from "../render/renders";
import { PollAnswers } from "../render/poll-answers";
import { registerQuoteRoute } from "../render/quote";
import { LocalObjectStore } from "../storage/local-store";
import type { ObjectStore } from "../storage/object-store";
import { registerStorageRoutes } from "../storage/local-routes";
import { buildOpenApiDocument } from "./openapi";
import { OPERATION_ID, OPERATIONS, routeOf } from "./operations";
import { answerSerializer, useZodSchemas, type ZodTypeProvider } from "./schema-compilers";

const SECRET_QUERY_PARAMS = /([?&](?:sig|signature|api_key|token|code|user_code|state)=)[^&]*/gi;

const BODY_LIMIT_BYTES = 1024 * 1024;

/** The poll lane of each app createFastify made, opened by configureApp once /v3 is set up. */
const pollLanes = new WeakMap<FastifyInstance, PollLane>();

export function redactUrl(url: string): string {
  return url.includes("?") ? url.replace(SECRET_QUERY_PARAMS, "$1[REDACTED]") : url;
}

/**
 * The service's pino options. Its lines go to stderr through pino's asynchronous destination
 * (createFastify): while one write is in flight the next lines gather and leave in one write,
 * instead of one synchronous write per request (process.stderr is synchronous on a pipe), and a
 * line is never held back waiting for more, so a quiet service logs at once; pino flushes what is
 * pending when the process exits. The poll lane's request lines alone wait up to 50 ms, to leave
 * in batches (batched-log.ts).
 */
export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    // No `req.headers.*` paths: the `req` serializer below keeps no headers at all, and a path
    // under `req` made pino redact every request line (issue 40: a poll's log line is its cost).
    redact: {
      paths: ["headers.authorization", 'headers["x-api-key"]'],
      censor: "[REDACTED]",
    },
    serializers: {
      req(request: { method: string; url: string; ip?: string }) {
        return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
      },
    },
  };
}

/**
 * One line per request (method, redacted URL, status, time) instead of fastify's two, and no
 * raw URLs anywhere: signed URLs carry their signature in the query.
 */
class ServiceLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = {
      req: request,
      res: reply,
      responseTime: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (error) request.log.error({ ...line, err: error }, "request errored");
    else request.log.info(line, "request completed");
  }

  override routeNotFound(request: FastifyRequest): void {
    request.log.info(`route ${request.method} ${redactUrl(request.url)} not found`);
  }
}

export interface AppDependencies {
  queue: JobQueue;
  /** The local store's signed URLs are served here; an S3 store serves its own. */
  store: ObjectStore;
  /** False once shutdown begins: /readyz answers 503. */
  isReady: () => boolean;
  /** True once shutdown begins: every request answers 503 in the error envelope. */
  isClosing: () => boolean;
}

/** Liveness, and readiness: the database and the object store answer, and no shutdown began. */
export function registerHealthRoutes(
  app: FastifyInstance,
  ctx: ServiceContext,
  deps: Pick<AppDependencies, "store" | "isReady">,
): void {
  app.get("/healthz", async () => ({ data: { status: "ok" } }));
  app.get("/readyz", async (request, reply) => {
    try {
      await sql`select 1`.execute(ctx.db);
    } catch {
      return reply
        .code(503)
        .send({ error: { code: "service_unavailable", message: "the database is not reachable" } });
    }
    try {
      await deps.store.check();
    } catch (error) {
      request.log.warn({ err: error }, "the object store check failed");
      return reply.code(503).send({
        error: { code: "service_unavailable", message: "the object store is not reachable" },
      });
    }
    if (!deps.isReady()) {
      return reply
        .code(503)
        .send({ error: { code: "service_unavailable", message: "the service is shutting down" } });
    }
    return { data: { status: "ready" } };
  });
}

/** Adds the routes to an app whose logger is ctx.log. */
export function configureApp(
  app: FastifyInstance,
  ctx: ServiceContext,
  deps: AppDependencies,
): FastifyInstance {
  app.decorateRequest("principal", null);
  // During shutdown a request that still arrives on an open connection gets our envelope (fastify's
  // own closing answer has another shape), and is told to retry, on another process.
  app.addHook("onRequest", (_request, reply, done) => {
    if (!deps.isClosing()) return done();
    void reply
      .code(503)
      .header("retry-after", "1")
      .header("connection", "close")
      .send({
        error: { code: "service_unavailable", message: "the service is shutting down; retry" },
      });
  });
  // Every /v3 operation is declared in operations.ts, which the OpenAPI document is made from.
  app.addHook("onRoute", (route) => {
    const declared = (route.schema as Record<string, unknown> | undefined)?.[OPERATION_ID];
    if (route.url.startsWith("/v3/") && route.url !== "/v3/openapi.json" && !declared) {
      throw new Error(`${route.method} ${route.url} is not declared in http/operations.ts`);
    }
  });

  app.setErrorHandler((error, request, reply) => {
    let apiError: ApiError;
    if (isApiError(error)) {
      apiError = error;
    } else {
      const fastifyError = error as { statusCode?: number; code?: string; message?: string };
      const status = fastifyError.statusCode ?? 500;
      if (status === 413)
        apiError = new ApiError(
          "request_too_large",
          `the request body is over ${BODY_LIMIT_BYTES / 1024 / 1024} MiB; send a smaller JSON body`,
        );
      else if (status === 415)
        apiError = new ApiError(
          "invalid_parameter",
          "send a JSON body (content-type: application/json)",
        );
      else if (status >= 400 && status < 500)
        apiError = new ApiError("invalid_parameter", safeMessage(fastifyError.message));
      else {
        request.log.error({ err: error }, "unhandled error");
        apiError = internalError();
      }
    }
    for (const [name, value] of Object.entries(apiError.headers)) reply.header(name, value);
    return reply.code(apiError.status).send({ error: errorBody(apiError) });
  });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({
      error: {
        code: "not_found",
        message: `no route ${request.method} ${redactUrl(request.url)}`,
      },
    }),
  );

  registerHealthRoutes(app, ctx, deps);
  // The API's description, without a key (it holds no account data).
  // Built on the first request, not at every start (it converts every schema of the API).
  let openApi: string | undefined;
  app.get("/v3/openapi.json", async (_request, reply) => {
    openApi ??= JSON.stringify(buildOpenApiDocument());
    return reply.type("application/json; charset=utf-8").send(openApi);
  });

  if (deps.store instanceof LocalObjectStore) registerStorageRoutes(app, deps.store);

  // Sign-in (SPEC.md section 5): OAuth endpoints, sign-in pages; access tokens work on /v3.
  const oauth = new AuthorizationServer(ctx.db, oauthSettings(ctx.config), ctx.now);
  // Failed credentials, per client address and key prefix, shared by /v3 and the token endpoint.
  const failures = new FailedCredentialThrottle(
    ctx.db,
    {
      perClient: ctx.config.authFailuresPerClient,
      perKeyPrefix: ctx.config.authFailuresPerKeyPrefix,
      windowMs: ctx.config.authFailureWindowSeconds * 1000,
    },
    ctx.now,
  );
  const deviceCodesMax = ctx.config.deviceCodesPerClient;
  registerOAuthRoutes(app, oauth, {
    failures,
    deviceCodes:
      deviceCodesMax > 0
        ? {
            counter: reconciledCounter(
              app,
              ctx,
              deviceCodesMax,
              ctx.config.deviceCodeTtlSeconds * 1000,
            ),
            max: deviceCodesMax,
          }
        : undefined,
  });
  registerAuthPages(app, ctx, oauth);

  const authenticator = new ApiKeyAuthenticator(ctx.db);
  /** A key or access token this process accepted moments ago: no query, no promise. */
  const cachedPrincipal = (key: string) =>
    key.startsWith(ACCESS_TOKEN_PREFIX) ? oauth.cachedAccessToken(key) : authenticator.cached(key);
  void app.register(async (v3) => {
    // A callback hook whose common case (a credential this process accepted moments ago, a poll)
    // runs without a promise; the rest goes through `authenticateRequest`.
    v3.addHook("onRequest", (request, _reply, done) => {
      const key = credentialOf(request.headers);
      const principal = key ? cachedPrincipal(key) : undefined;
      if (principal) {
        request.principal = principal;
        return done();
      }
      authenticateRequest(request, key).then(() => done(), done);
    });
    const authenticateRequest = async (request: FastifyRequest, key: string | undefined) => {
      const isAccessToken = key?.startsWith(ACCESS_TOKEN_PREFIX) ?? false;
      // Runs only when the credential is not one this process accepted moments ago.
      const unlessThrottled = async () => {
        const wait = await failures.check(request.ip, key);
        if (!wait) return;
        throw new ApiError("rate_limit_exceeded", throttledMessage(wait), undefined, {
          "retry-after": String(wait.retryAfterSeconds),
        });
      };
      const principal = !key
        ? undefined
        : isAccessToken
          ? await oauth.authenticateAccessToken(key, unlessThrottled)
          : await authenticator.authenticate(key, unlessThrottled);
      if (key && !principal && failures.enabled) {
        await failures.recordFailure(request.ip, key).catch((error: unknown) => {
          request.log.warn({ err: error }, "a failed credential could not be counted");
        });
      }
      if (!principal) {
        throw new ApiError(
          "authentication_failed",
          !key
            ? "send an API key in x-api-key or Authorization: Bearer"
            : isAccessToken
              ? "the access token is invalid, expired or revoked"
              : "the API key is invalid or revoked",
          undefined,
          isAccessToken ? { "www-authenticate": 'Bearer error="invalid_token"' } : {},
        );
      }
      request.principal = principal;
    };
    const limit = await registerRateLimit(v3, ctx);
    const answers = new PollAnswers(ctx, answerSerializer(OPERATIONS.getRender.success.schema));
    pollLanes.get(app)?.open({
      cachedPrincipal,
      limit,
      answer: (userId, renderId) => answers.answer(userId, renderId),
      isClosing: deps.isClosing,
      metrics: ctx.metrics,
      log: ctx.log,
    });
    registerAssetRoutes(v3, ctx);
    registerRenderRoutes(v3, ctx, deps.queue);
    registerQuoteRoute(v3, ctx);
    v3.withTypeProvider<ZodTypeProvider>().route({
      ...routeOf("getMe"),
      handler: async (request) => {
        const { user: cached } = principalOf(request);
        const user = await ctx.db
          .selectFrom("users")
          .selectAll()
          .where("id", "=", cached.id)
          .executeTakeFirstOrThrow();
        return {
          data: {
            username: user.username,
            email: user.email,
            first_name: user.first_name,
            last_name: user.last_name,
            billing: {
              plan: user.plan,
              credits_remaining: fromMilli(user.credits_remaining_milli),
              credits_used: fromMilli(user.credits_used_milli),
            },
          },
        };
      },
    });
  });
  return app;
}

/**
 * A request's id: the caller's `x-request-id` when it is a plain token (a load balancer's, so one
 * id follows the request through), else a new one. Unique across API processes, unlike fastify's
 * per-process counter, because it is stored on the render and searched for in the logs of every
 * process that works on it: a random prefix drawn once per process, then a counter. (A fresh
 * `randomBytes` per request cost about 25 µs of a poll's CPU; an id needs to be unique, not secret.)
 */
const PROCESS_ID_PREFIX = `req_${randomBytes(6).toString("base64url")}`;
let requestCounter = 0;

export function requestIdOf(request: { headers: Record<string, unknown> }): string {
  const given = request.headers["x-request-id"];
  if (typeof given === "string" && given.length >= 8 && REQUEST_ID.test(given)) return given;
  return PROCESS_ID_PREFIX + (requestCounter++).toString(36).padStart(8, "0");
}

const REQUEST_ID = /^[\w.:-]{8,128}$/;

/**
 * `trustedProxies`: addresses or CIDRs of the load balancers in front (SVC_SERVER_TRUSTED_PROXIES),
 * whose X-Forwarded-For names the client: the failed-credential throttle and the device-code limit
 * count per client address, and behind a balancer every client would otherwise be its address.
 */
export function createFastify(logLevel: string, trustedProxies: string[] = []): FastifyInstance {
  const destination = pino.destination({ dest: 2, sync: false });
  const options = loggerOptions(logLevel);
  const app = Fastify({
    ...(trustedProxies.length > 0 ? { trustProxy: trustedProxies } : {}),
    genReqId: requestIdOf,
    logger: { ...options, stream: destination },
    bodyLimit: BODY_LIMIT_BYTES,
    logController: new ServiceLogController(),
    forceCloseConnections: true,
    return503OnClosing: false,
  });
  const lane = new PollLane(trustedProxies, batchedLogger(options, destination), requestIdOf);
  lane.install(app.server);
  app.addHook("onClose", (_app, done) => {
    lane.close();
    done();
  });
  pollLanes.set(app, lane);
  // A callback hook, not an async one: every answer passes here, and a promise per request costs.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    done();
  });
  acceptEmptyJsonBodies(app);
  useZodSchemas(app);
  return app;
}

/**
 * Many HTTP clients send `content-type: application/json` on every request, bodiless ones too
 * (GET, DELETE, `POST .../complete`). An empty body with that header is no body, not a 400;
 * anything else goes through fastify's own JSON parser (prototype-poisoning checks included).
 */
function acceptEmptyJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    if (typeof body === "string" && body.trim() === "") return done(null, undefined);
    parseJson(request, body.toString(), done);
  });
}

function safeMessage(message: string | undefined): string {
  return (message ?? "bad request").split("\n")[0]!.slice(0, 300);
}
