// GET /metrics (Prometheus text format) and the per-request measurements behind it. Never behind
// the API key: a scraper has none. It is kept off the public address instead: served on the main
// listener only when that listener is on loopback, or on its own listener
// (SVC_SERVER_METRICS_HOST/PORT, 127.0.0.1 unless set), which an operator exposes to the scraper
// alone. Routes are labelled by their pattern (`/v3/svc/renders/:id`), never the raw URL, so ids
// and signed query strings neither leak nor multiply the series.
import Fastify, { type FastifyInstance } from "fastify";
import type { ServiceMetrics } from "../metrics";

export function isLoopbackHost(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

export function registerMetricsRoute(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.get("/metrics", async (_request, reply) => {
    const { contentType, body } = await metrics.scrape();
    return reply.type(contentType).header("cache-control", "no-store").send(body);
  });
}

/** Counts every answered request, by method, route pattern and status, with its latency. */
export function measureRequests(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook("onResponse", (request, reply, done) => {
    const route = request.routeOptions.url ?? "unmatched";
    if (route !== "/metrics") {
      metrics.http.observe(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    }
    done();
  });
}

/** /metrics on a listener of its own; resolves to its URL. */
export async function startMetricsListener(
  metrics: ServiceMetrics,
  host: string,
  port: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const app = Fastify({ logger: false, forceCloseConnections: true });
  registerMetricsRoute(app, metrics);
  const address = await app.listen({ host, port });
  return { url: `${address}/metrics`, close: () => app.close() };
}
