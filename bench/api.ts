// API latency benchmark: p50/p99 of GET /v3/svc/renders/{id} under 200 concurrent pollers.
// Starts a real service process on loopback (API only, rate limit off so every request is
// served, request logging on as in production), creates one render, then runs 200 keep-alive
// pollers for a fixed time and request budget. Run: npx tsx bench/api.ts [seconds] [pollers]
import http from "node:http";
import { api, startService, uploadProject } from "../src/server/testing/service-process";
import { buildZip, compositionHtml } from "../src/server/testing/zip-builder";

const SECONDS = Number(process.argv[2] ?? 10);
const POLLERS = Number(process.argv[3] ?? 200);
const WARMUP_SECONDS = 2;
const MAX_REQUESTS = 500_000;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const svc = await startService({ workers: 0, env: { SVC_SERVER_RATE_LIMIT_PER_MINUTE: "0" } });
  try {
    const { assetId } = await uploadProject(
      svc,
      svc.apiKey,
      buildZip([{ name: "index.html", data: compositionHtml() }]),
    );
    const submitted = await api(svc, "POST", "/v3/svc/renders", {
      key: svc.apiKey,
      body: { project: { type: "asset_id", asset_id: assetId }, title: "bench" },
    });
    const renderId: string = submitted.body.data.render_id;
    const target = new URL(`${svc.url}/v3/svc/renders/${renderId}`);
    if (target.hostname !== "127.0.0.1") throw new Error("the benchmark runs on loopback only");
    const agent = new http.Agent({ keepAlive: true, maxSockets: POLLERS });

    const get = () =>
      new Promise<number>((resolve, reject) => {
        const started = process.hrtime.bigint();
        const request = http.get(
          target,
          { agent, headers: { "x-api-key": svc.apiKey } },
          (response) => {
            response.resume();
            response.on("end", () => {
              if (response.statusCode !== 200) reject(new Error(`HTTP ${response.statusCode}`));
              else resolve(Number(process.hrtime.bigint() - started) / 1e6);
            });
          },
        );
        request.on("error", reject);
      });

    let measuring = false;
    let stop = false;
    let total = 0;
    let errors = 0;
    const latencies: number[] = [];
    const poller = async () => {
      while (!stop && total < MAX_REQUESTS) {
        total++;
        try {
          const ms = await get();
          if (measuring) latencies.push(ms);
        } catch {
          if (measuring) errors++;
        }
      }
    };
    const pollers = Array.from({ length: POLLERS }, poller);
    await new Promise((r) => setTimeout(r, WARMUP_SECONDS * 1000));
    measuring = true;
    const started = Date.now();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    measuring = false;
    const elapsed = (Date.now() - started) / 1000;
    stop = true;
    await Promise.all(pollers);
    agent.destroy();

    latencies.sort((a, b) => a - b);
    const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
    console.log(
      `GET /v3/svc/renders/{id}: ${POLLERS} concurrent keep-alive pollers, ${elapsed.toFixed(1)} s measured after ${WARMUP_SECONDS} s warm-up`,
    );
    console.log(
      `requests ${latencies.length} (${(latencies.length / elapsed).toFixed(0)}/s), errors ${errors}`,
    );
    console.log(
      `p50 ${fmt(percentile(latencies, 50))}  p90 ${fmt(percentile(latencies, 90))}  p99 ${fmt(percentile(latencies, 99))}  max ${fmt(latencies[latencies.length - 1] ?? NaN)}`,
    );
  } finally {
    await svc.kill();
  }
}

await main();
