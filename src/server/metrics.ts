// The service's metrics in the Prometheus text format (prom-client), served as GET /metrics by
// every role (http/metrics-routes.ts says where). Two kinds:
// - this process's own events: HTTP requests (API), render jobs, chunk attempts and seconds per
//   frame (workers), webhook deliveries (API). Sum them across processes.
// - the cluster's state, read from the shared database at each scrape: renders by state and
//   failure code, the queue (renders waiting for a worker, and the oldest one's age), renders held
//   by the per-account cap, credits charged. Every process reports the same values: take max().
// Metric names and labels are listed in src/server/README.md ("Metrics"); keep the two equal.
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type MetricValue,
} from "prom-client";
import type { Database } from "./db/database";
import { countRenders, type RenderCounts } from "./render/render-repository";

/** Seconds buckets for HTTP latency (fast API calls, slow uploads). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds buckets for render jobs (a short clip to a long chunked render). */
const JOB_BUCKETS = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 3600];
const FRAME_BUCKETS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2];

export type JobOutcome =
  "completed" | "failed" | "retried" | "released" | "abandoned" | "superseded";
/** What became of a straggler chunk's speculative copy (render/speculation.ts). */
export type SpeculativeOutcome = "started" | "won" | "lost" | "failed";
export type WebhookOutcome = "delivered" | "failed" | "gave_up";

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly http: RequestMetrics;
  readonly jobDuration: Histogram<"kind" | "outcome">;
  readonly secondsPerFrame: Histogram<"kind">;
  /** Polls answered by the poll lane (http/poll-lane.ts), a part of svc_http_requests_total. */
  readonly pollLaneAnswers: Counter;
  readonly chunkAttempts: Counter;
  readonly chunkRetries: Counter;
  readonly speculativeChunks: Counter<"outcome">;
  readonly webhookDeliveries: Counter<"outcome">;

  constructor(db: Database | undefined, labels: { role: string }) {
    const registers = [this.registry];
    this.registry.setDefaultLabels(labels);
    collectDefaultMetrics({ register: this.registry, prefix: "svc_process_" });
    this.http = new RequestMetrics(this.registry);
    this.jobDuration = new Histogram({
      name: "svc_render_job_duration_seconds",
      help: "Time from claiming a render job to its end, by kind (whole, chunk, join) and outcome.",
      labelNames: ["kind", "outcome"],
      buckets: JOB_BUCKETS,
      registers,
    });
    this.secondsPerFrame = new Histogram({
      name: "svc_render_seconds_per_frame",
      help: "Seconds a finished whole or chunk job spent per frame it rendered.",
      labelNames: ["kind"],
      buckets: FRAME_BUCKETS,
      registers,
    });
    this.pollLaneAnswers = new Counter({
      name: "svc_http_poll_lane_total",
      help: "Polls of a render answered before the framework's request path (counted in svc_http_requests_total too).",
      registers,
    });
    this.chunkAttempts = new Counter({
      name: "svc_chunk_attempts_total",
      help: "Chunk jobs started by this process's workers (every attempt).",
      registers,
    });
    this.chunkRetries = new Counter({
      name: "svc_chunk_retries_total",
      help: "Chunk jobs started again after an earlier attempt (attempt > 1).",
      registers,
    });
    this.speculativeChunks = new Counter({
      name: "svc_chunk_speculative_total",
      help: "Speculative second copies of straggler chunks: started (queued by this process), won (finished first), lost (the first run finished first), failed.",
      labelNames: ["outcome"],
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: "svc_webhook_deliveries_total",
      help: "Webhook delivery attempts by outcome: delivered, failed (will retry), gave_up.",
      labelNames: ["outcome"],
      registers,
    });
    if (db) this.registerDatabaseGauges(db, registers);
  }

  /** The text a scrape answers, and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private registerDatabaseGauges(db: Database, registers: Registry[]): void {
    // One query per scrape, shared by the gauges below.
    let pending: Promise<RenderCounts> | undefined;
    const state = () => {
      pending ??= countRenders(db).finally(() => {
        pending = undefined;
      });
      return pending;
    };
    new Gauge({
      name: "svc_renders",
      help: "Renders (not deleted) by state: queued, rendering, completed, failed.",
      labelNames: ["state"],
      registers,
      async collect() {
        this.reset();
        for (const row of (await state()).byStatus) this.set({ state: row.status }, row.count);
      },
    });
    new Gauge({
      name: "svc_render_failures",
      help: "Failed renders by failure code.",
      labelNames: ["code"],
      registers,
      async collect() {
        this.reset();
        for (const row of (await state()).failures) this.set({ code: row.code }, row.count);
      },
    });
    new Gauge({
      name: "svc_queue_depth",
      help: "Renders queued for a worker and not started yet (held renders not counted).",
      registers,
      async collect() {
        this.set((await state()).queued);
      },
    });
    new Gauge({
      name: "svc_queue_oldest_age_seconds",
      help: "Age of the oldest render queued for a worker; 0 when none waits.",
      registers,
      async collect() {
        const { oldestQueuedMs } = await state();
        this.set(oldestQueuedMs === undefined ? 0 : (Date.now() - oldestQueuedMs) / 1000);
      },
    });
    new Gauge({
      name: "svc_renders_held",
      help: "Renders waiting because their account is at its cap on renders in progress.",
      registers,
      async collect() {
        this.set((await state()).held);
      },
    });
    new Gauge({
      name: "svc_credits_charged",
      help: "Credits charged for completed renders, all accounts (grows like a counter).",
      registers,
      async collect() {
        this.set((await state()).creditsCharged);
      },
    });
  }
}

interface RequestSeries {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  /** Observations per bucket of HTTP_BUCKETS (not cumulative), the last one past every bound. */
  buckets: Float64Array;
}

/**
 * `svc_http_requests_total` and `svc_http_request_duration_seconds`, kept as plain numbers per
 * (method, route, status) and written out in Prometheus's form only when scraped. Every API
 * request passes here, so counting it is a map lookup and three additions, where prom-client's
 * Counter and Histogram hash a labels object on every call.
 */
export class RequestMetrics {
  private readonly series = new Map<string, RequestSeries>();

  constructor(registry: Registry) {
    registry.registerMetric(this.metric("svc_http_requests_total", "counter", () => this.counts()));
    registry.registerMetric(
      this.metric("svc_http_request_duration_seconds", "histogram", () => this.durations()),
    );
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      series = {
        labels: { method, route, status: String(status) },
        count: 0,
        sum: 0,
        buckets: new Float64Array(HTTP_BUCKETS.length + 1),
      };
      this.series.set(key, series);
    }
    series.count++;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < HTTP_BUCKETS.length && seconds > HTTP_BUCKETS[bucket]!) bucket++;
    series.buckets[bucket]!++;
  }

  private counts(): MetricValue<string>[] {
    return [...this.series.values()].map((series) => ({
      labels: series.labels,
      value: series.count,
    }));
  }

  private durations(): MetricValue<string>[] {
    const values: (MetricValue<string> & { metricName: string })[] = [];
    const name = "svc_http_request_duration_seconds";
    for (const series of this.series.values()) {
      let cumulative = 0;
      HTTP_BUCKETS.forEach((bound, index) => {
        cumulative += series.buckets[index]!;
        values.push({
          metricName: `${name}_bucket`,
          labels: { ...series.labels, le: bound },
          value: cumulative,
        });
      });
      values.push({
        metricName: `${name}_bucket`,
        labels: { ...series.labels, le: "+Inf" },
        value: series.count,
      });
      values.push({ metricName: `${name}_sum`, labels: series.labels, value: series.sum });
      values.push({ metricName: `${name}_count`, labels: series.labels, value: series.count });
    }
    return values;
  }

  /** A registry entry that answers a scrape from `values`. */
  private metric(
    name: string,
    type: "counter" | "histogram",
    values: () => MetricValue<string>[],
  ): Counter {
    const help =
      type === "counter"
        ? "HTTP requests answered, by method, route pattern and status code."
        : "Time to answer an HTTP request, by method, route pattern and status code.";
    const entry = {
      name,
      help,
      type,
      aggregator: "sum",
      get: () => Promise.resolve({ name, help, type, aggregator: "sum", values: values() }),
    };
    // The registry reads name, help, type and get() of what it is given; nothing else.
    return entry as unknown as Counter;
  }
}
