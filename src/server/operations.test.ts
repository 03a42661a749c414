// What an operator watches, through the real service process: GET /metrics scraped while renders
// run (the queue depth goes 1 -> 0, render jobs are timed), its names documented, and one request
// id that finds a render's submit, every job and chunk of it and its webhook delivery in the log.
// Two tiny renders on one worker, each cut in two chunks and joined: the second waits in the
// queue while the first renders.
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Receiver } from "./testing/https-receiver";
import {
  api,
  startServiceWithReceiver,
  uploadProject,
  waitForTerminalRender,
  type ServiceProcess,
} from "./testing/service-process";
import { buildZip, compositionHtml } from "./testing/zip-builder";
import { waitFor } from "../shared/testing/wait-for";

const REPO = resolve(import.meta.dirname, "../..");

let svc: ServiceProcess;
let receiver: Receiver;

beforeAll(async () => {
  ({ svc, receiver } = await startServiceWithReceiver({
    jobs: 1,
    env: {
      // Each render (2 s) is cut in two chunks of 1 s and joined.
      SVC_SERVER_MAX_CHUNKS: "2",
      SVC_SERVER_CHUNK_SECONDS: "1",
    },
  }));
});

afterAll(async () => {
  await svc?.kill();
  await receiver?.close();
});

/** One sample's value from the exposition text, or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}) {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([a-z_:]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => found[key] === value))
      return Number(match[3]);
  }
  return undefined;
}

describe("operations", () => {
  let firstRequestId: string;
  let firstRenderId: string;

  it("scraped during renders, /metrics shows the queue depth go 1 -> 0 and times the render jobs, without an API key", async () => {
    const zip = buildZip([{ name: "index.html", data: compositionHtml({ seconds: 2 }) }]);
    const { assetId } = await uploadProject(svc, svc.apiKey, zip);
    const submit = (callback: boolean) =>
      api(svc, "POST", "/v3/svc/renders", {
        key: svc.apiKey,
        body: {
          project: { type: "asset_id", asset_id: assetId },
          fps: 4,
          quality: "draft",
          ...(callback
            ? { callback_url: `${receiver.url}/hook`, callback_id: "operations-1" }
            : {}),
        },
      });
    const first = await submit(true);
    expect(first.status).toBe(201);
    firstRequestId = first.headers.get("x-request-id")!;
    expect(firstRequestId).toMatch(/^req_[\w-]{16}$/);
    firstRenderId = first.body.data.render_id;
    const second = await submit(false);
    expect(second.status).toBe(201);
    expect(second.headers.get("x-request-id")).not.toBe(firstRequestId);

    const depths: number[] = [];
    let text = "";
    await waitFor(
      "both renders to finish while scraping",
      async () => {
        const scraped = await fetch(`${svc.url}/metrics`);
        expect(scraped.status).toBe(200);
        expect(scraped.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
        text = await scraped.text();
        const depth = sample(text, "svc_queue_depth")!;
        if (depths.at(-1) !== depth) depths.push(depth);
        // Done once both are completed and the last join's worker has timed it.
        const done = sample(text, "svc_renders", { state: "completed" }) ?? 0;
        const joins =
          sample(text, "svc_render_job_duration_seconds_count", {
            kind: "join",
            outcome: "completed",
          }) ?? 0;
        return done === 2 && joins === 2 ? true : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 50 },
    );
    // The second render waited while the first rendered, then a worker took it.
    expect(depths.indexOf(0, depths.indexOf(1))).toBeGreaterThan(depths.indexOf(1));
    expect(depths).toContain(1);
    expect(depths.at(-1)).toBe(0);

    const jobs = (kind: string) =>
      sample(text, "svc_render_job_duration_seconds_count", { kind, outcome: "completed" });
    expect(jobs("chunk")).toBe(4);
    expect(jobs("join")).toBe(2);
    expect(
      sample(text, "svc_render_job_duration_seconds_sum", { kind: "join", outcome: "completed" }),
    ).toBeGreaterThan(0);
    expect(sample(text, "svc_render_seconds_per_frame_count", { kind: "chunk" })).toBe(4);
    expect(sample(text, "svc_chunk_attempts_total")).toBe(4);
    expect(sample(text, "svc_chunk_retries_total")).toBe(0);
    expect(sample(text, "svc_credits_charged")).toBeGreaterThan(0);
    expect(
      sample(text, "svc_http_requests_total", {
        method: "POST",
        route: "/v3/svc/renders",
        status: "201",
      }),
    ).toBe(2);
    expect(
      sample(text, "svc_http_request_duration_seconds_count", {
        method: "POST",
        route: "/v3/svc/renders",
        status: "201",
      }),
    ).toBe(2);
    // Route patterns only: no render id, asset id or signature in any label.
    expect(text).not.toContain(firstRenderId);
    expect(text).not.toContain(assetId);
  });

  it("documents every metric it serves, with its labels", async () => {
    const text = await (await fetch(`${svc.url}/metrics`)).text();
    const readme = await readFile(join(REPO, "src", "server", "README.md"), "utf8");
    const names = new Set(
      [...text.matchAll(/^# TYPE (svc_\w+) /gm)]
        .map((m) => m[1]!)
        .filter((name) => !name.startsWith("svc_process_")),
    );
    expect(names.size).toBeGreaterThan(10);
    for (const name of names) expect(readme, `${name} in the README`).toContain(`\`${name}\``);
    await expect(
      readFile(join(REPO, "docs", "grafana-dashboard.json"), "utf8").then(JSON.parse),
    ).resolves.toMatchObject({ panels: expect.any(Array) });
  });

  it("finds the submit, every job and chunk, and the webhook of one render by its request id", async () => {
    await waitFor("the webhook", async () =>
      receiver.deliveries.find((d) => d.body.includes(firstRenderId)) ? true : undefined,
    );
    await waitForTerminalRender(svc, firstRenderId);
    const lines = await waitFor("the delivery's log line", async () => {
      const found = svc
        .logs()
        .split("\n")
        .filter((line) => line.includes(firstRequestId))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      return found.some((line) => line.msg === "webhook delivered") ? found : undefined;
    });
    const said = (msg: string, extra: Record<string, unknown> = {}) =>
      lines.some(
        (line) => line.msg === msg && Object.entries(extra).every(([k, v]) => line[k] === v),
      );
    expect(said("render submitted", { renderId: firstRenderId })).toBe(true);
    for (const chunk of [0, 1]) {
      expect(said("chunk started", { job: "chunk", chunk })).toBe(true);
      expect(said("chunk finished", { job: "chunk", chunk })).toBe(true);
    }
    expect(said("join started", { job: "join" })).toBe(true);
    expect(said("join finished", { job: "join" })).toBe(true);
    expect(said("webhook delivered", { renderId: firstRenderId })).toBe(true);
    // The other render's lines carry its own id, not this one.
    expect(
      lines.every((line) => line.renderId === undefined || line.renderId === firstRenderId),
    ).toBe(true);
  });
});
