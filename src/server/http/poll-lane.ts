// The polled answer's own lane (issue 40). Every client polls `GET /v3/svc/renders/{id}`, and
// fastify's request path (routing, hooks, reply, a child logger per request) was most of a poll's
// CPU. A poll whose credential (API key or access token) this process accepted moments ago, and
// that the rate limit admits without a query, is answered here on the `http.Server`, before fastify sees it, with everything fastify's
// path gives it: the same answer (the route's serialiser), `x-request-id`, the rate-limit headers,
// the HTTP metrics and one "request completed" log line. Anything else (another route, a credential
// not cached, a path with a query or an escape, the shutdown answer) goes to fastify untouched, so there is one behaviour with two paths to it, and the tests of every route hold.
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import proxyAddr from "@fastify/proxy-addr";
import type { FastifyBaseLogger } from "fastify";
import type { Logger } from "pino";
import type { LineBatch } from "./batched-log";
import type { Principal } from "../auth/accounts";
import { errorBody, internalError, isApiError } from "../errors";
import type { ServiceMetrics } from "../metrics";
import type { SharedWindowCounter } from "./rate-limit";
import { credentialOf } from "./request";

const PREFIX = "/v3/svc/renders/";
/** The route's pattern, as fastify labels it in the metrics. */
const ROUTE = "/v3/svc/renders/:id";
/** Ids as fastify would hand them to the route unchanged: no escapes, no slash, no query. */
const PLAIN_ID = /^[\w-]{1,128}$/;
const JSON_TYPE = "application/json; charset=utf-8";

export interface PollRoute {
  /** The principal of a credential this process accepted moments ago, else undefined. */
  cachedPrincipal(credential: string): Principal | undefined;
  /** The shared rate limit's counter, when the limit is on. */
  limit?: { counter: SharedWindowCounter; max: number };
  /**
   * The answer's body for a user's render, at once or as a promise; throws or rejects with an
   * ApiError (e.g. not found).
   */
  answer(userId: string, renderId: string): string | Promise<string>;
  isClosing(): boolean;
  metrics: ServiceMetrics;
  log: FastifyBaseLogger;
}

export class PollLane {
  private route: PollRoute | undefined;
  private readonly clientAddress: (request: IncomingMessage) => string | undefined;

  /**
   * `trustedProxies` as fastify's `trustProxy`: the log line names the same client address.
   * `requestLog`: where the lane's "request completed" lines go (batched, see batched-log.ts).
   * `requestId`: the id of a request, as fastify's genReqId gives it.
   */
  constructor(
    trustedProxies: string[],
    private readonly requestLog: { log: Logger; batch: LineBatch },
    private readonly requestId: (request: IncomingMessage) => string,
  ) {
    const trusted = trustedProxies.length > 0 ? proxyAddr.compile(trustedProxies) : undefined;
    this.clientAddress = trusted
      ? (request) => proxyAddr(request, trusted)
      : (request) => request.socket.remoteAddress;
  }

  /** Writes out the pending log lines; the lane's requests are over. */
  close(): void {
    this.route = undefined;
    this.requestLog.batch.close();
  }

  /** Opens the lane once the route's parts exist; until then every request goes to fastify. */
  open(route: PollRoute): void {
    this.route = route;
  }

  /**
   * Puts the lane in front of the server's request handler (fastify's, the only one), so a
   * request the lane does not take reaches fastify exactly as before.
   */
  install(server: Server): void {
    const handlers = server.listeners("request") as ((
      request: IncomingMessage,
      response: ServerResponse,
    ) => void)[];
    if (handlers.length !== 1) throw new Error("the poll lane expects one request handler");
    const [fastifyHandler] = handlers as [(typeof handlers)[number]];
    server.removeAllListeners("request");
    server.on("request", (request: IncomingMessage, response: ServerResponse) => {
      if (!this.take(request, response)) fastifyHandler(request, response);
    });
  }

  /** True when the request is answered here. */
  private take(request: IncomingMessage, response: ServerResponse): boolean {
    const route = this.route;
    const url = request.url;
    if (!route || request.method !== "GET" || !url?.startsWith(PREFIX)) return false;
    const renderId = url.slice(PREFIX.length);
    if (!PLAIN_ID.test(renderId) || route.isClosing()) return false;
    const key = credentialOf(request.headers);
    const principal = key ? route.cachedPrincipal(key) : undefined;
    if (!principal) return false;
    const headers: Record<string, string | number> = {
      "x-request-id": this.requestId(request),
      "content-type": JSON_TYPE,
    };
    if (route.limit) {
      const counted = route.limit.counter.admitLocally(principal.credentialId);
      if (!counted) return false;
      headers["x-ratelimit-limit"] = route.limit.max;
      headers["x-ratelimit-remaining"] = Math.max(0, route.limit.max - counted.current);
      headers["x-ratelimit-reset"] = Math.ceil(counted.ttl / 1000);
    }
    const started = performance.now();
    const answered = (body: string) =>
      this.send(route, request, response, headers, 200, body, started);
    const failed = (error: unknown) => {
      // As the service's error handler: an ApiError is the answer, anything else a logged bug.
      if (!isApiError(error)) route.log.error({ err: error }, "unhandled error");
      const apiError = isApiError(error) ? error : internalError();
      for (const [name, value] of Object.entries(apiError.headers)) headers[name] = value;
      const body = JSON.stringify({ error: errorBody(apiError) });
      this.send(route, request, response, headers, apiError.status, body, started);
    };
    try {
      const answer = route.answer(principal.user.id, renderId);
      // A kept answer is sent in this turn, with no promise in between.
      if (typeof answer === "string") answered(answer);
      else answer.then(answered, failed);
    } catch (error) {
      failed(error);
    }
    return true;
  }

  private send(
    route: PollRoute,
    request: IncomingMessage,
    response: ServerResponse,
    headers: Record<string, string | number>,
    status: number,
    body: string,
    started: number,
  ): void {
    headers["content-length"] = Buffer.byteLength(body);
    response.writeHead(status, headers);
    response.end(body);
    const elapsedMs = performance.now() - started;
    route.metrics.http.observe("GET", ROUTE, status, elapsedMs / 1000);
    route.metrics.pollLaneAnswers.inc();
    // The line fastify's path writes (ServiceLogController), with the same fields.
    this.requestLog.log.info(
      {
        reqId: headers["x-request-id"],
        req: { method: "GET", url: request.url, ip: this.clientAddress(request) },
        res: { statusCode: status },
        responseTime: Math.round(elapsedMs * 100) / 100,
      },
      "request completed",
    );
  }
}
