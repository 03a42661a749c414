// API latency and throughput, open loop: GET /v3/svc/renders/{id} sent at a fixed arrival rate
// from this process to one service process (API only, rate limit off, request logging at info as
// in production). Each request has a scheduled send time (start + i / rate); its latency is
// measured from that time, not from when a connection was free, so a stalled service shows up
// in the figures instead of slowing the load down (no coordinated omission).
//
// Steps: rising rates from 2,000/s until p99 passes 50 ms or errors appear (every rate given with
// --rates runs); the goal is 4,000/s with p99 < 20 ms;
// the highest rate with p99 < 50 ms and no errors is the figure. With --baseline DIR, the same
// steps run against a service started from DIR (another checkout, e.g. `git worktree add` or
// `git archive` of the commit before a change, with node_modules) alternating A B A B, so both
// see the same machine load. Whole-machine CPU (/proc/stat) and the load average go with each step.
//
// Run: npm run bench:api -- [--seconds 10] [--rates 2000,3000,...] [--reps 1] [--baseline DIR]
//      [--cpu-prof DIR] [--rate-limit PER_MINUTE] [--with-rate-limit] [--floor]
// --with-rate-limit adds a third service from this checkout with the shared rate limit on (a
// limit far above the bench's traffic, so every request is counted and none refused), in the same
// A B A B rotation, and the summary prints its CPU per request against the one with the limit off.
// --floor adds Node's bare http server answering the same body (startFloor): the cost of HTTP
// alone on this machine, measured in the same rotation.
import { spawn } from "node:child_process";
import http from "node:http";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { api, startService, uploadProject } from "../src/server/testing/service-process";
import { buildZip, compositionHtml } from "../src/server/testing/zip-builder";
import { busyBetween, cpuTimes } from "./cpu";

const { values: flags } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    rates: { type: "string", default: "2000,3000,4000,5000,6000,7000,8000" },
    reps: { type: "string", default: "1" },
    baseline: { type: "string" },
    connections: { type: "string", default: "512" },
    "cpu-prof": { type: "string" },
    "rate-limit": { type: "string", default: "0" },
    "with-rate-limit": { type: "boolean", default: false },
    floor: { type: "boolean", default: false },
  },
});
const SECONDS = Number(flags.seconds);
const RATES = flags.rates!.split(",").map(Number);
const explicitRates = process.argv.includes("--rates");
const REPS = Number(flags.reps);
/** Issue 40: 4,000 polls a second on one API process with p99 under 20 ms. */
const GOAL = { rate: 4000, p99Ms: 20 };
const CEILING_P99_MS = 50;
/**
 * Warm-up of each target before the steps: 2 s at 500/s, then 3 s at 2,000/s, so the first step
 * measures the request path once V8 has optimised it, as a service that has been up for a while
 * runs it, rather than the optimising compiler's own work (a fifth of a cold step's CPU in `perf`).
 */
const WARMUP = [
  { rate: 500, seconds: 2 },
  { rate: 2000, seconds: 3 },
];
/** A request with no answer by then counts as an error (and its latency as this). */
const REQUEST_TIMEOUT_MS = 30_000;
/**
 * SVC_SERVER_RATE_LIMIT_PER_MINUTE for the services: 0 (off) by default; a limit far above the
 * bench's own traffic (e.g. 100000000) measures what counting the shared limit costs.
 */
const RATE_LIMIT = flags["rate-limit"]!;
/** The limit of the --with-rate-limit service: counted on every request, never reached. */
const COUNTED_RATE_LIMIT = "100000000";

interface Target {
  name: string;
  pid: number;
  url: URL;
  headers: Record<string, string>;
  stop(): Promise<void>;
}

interface StepResult {
  target: string;
  rate: number;
  sent: number;
  achieved: number;
  errors: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  cpuBusy: number;
  /** CPU time of the service process per request (user + system, /proc/PID/stat). */
  serviceCpuUs: number;
  /** The kernel's part of it (system time: sockets, log writes, SQLite's file locks). */
  serviceSystemUs: number;
  load1: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** User and system CPU seconds of one process so far. */
function processCpuSeconds(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

async function startTarget(name: string, root?: string, rateLimit = RATE_LIMIT): Promise<Target> {
  const nodeArgs = flags["cpu-prof"]
    ? ["--cpu-prof", `--cpu-prof-dir=${flags["cpu-prof"]}/${name}`]
    : [];
  const svc = await startService({
    workers: 0,
    root,
    env: { SVC_SERVER_RATE_LIMIT_PER_MINUTE: rateLimit, SVC_SERVER_LOG_LEVEL: "info" },
    nodeArgs,
    discardLogs: true,
  });
  const { assetId } = await uploadProject(
    svc,
    svc.apiKey,
    buildZip([{ name: "index.html", data: compositionHtml() }]),
  );
  const submitted = await api(svc, "POST", "/v3/svc/renders", {
    key: svc.apiKey,
    body: { project: { type: "asset_id", asset_id: assetId }, title: "bench" },
  });
  if (submitted.status !== 201) throw new Error(`submit: ${JSON.stringify(submitted.body)}`);
  const url = new URL(`${svc.url}/v3/svc/renders/${submitted.body.data.render_id}`);
  if (url.hostname !== "127.0.0.1") throw new Error("the benchmark runs on loopback only");
  return {
    name,
    pid: svc.child.pid!,
    url,
    headers: { "x-api-key": svc.apiKey },
    stop: () => svc.kill(),
  };
}

/**
 * The floor (--floor): Node's own `http` server in a process of its own, answering every request
 * with the body the service gave for the bench's render and the same headers, and doing nothing
 * else. What a poll costs above it is the service's own work (authentication, the read, the log
 * line, metrics); what it costs itself is Node's HTTP and the kernel's sockets on this machine.
 */
async function startFloor(like: Target): Promise<Target> {
  const answer = await fetch(like.url, { headers: like.headers });
  const body = await answer.text();
  const script = `
    const http = require("node:http");
    const body = process.env.BODY;
    const server = http.createServer((request, response) => {
      response.writeHead(200, {
        "x-request-id": "req_floor",
        "content-type": "application/json; charset=utf-8",
        "content-length": Buffer.byteLength(body),
      });
      response.end(body);
    });
    server.keepAliveTimeout = 72000;
    server.listen(0, "127.0.0.1", () => console.log(server.address().port));
  `;
  const child = spawn(process.execPath, ["-e", script], {
    env: { ...process.env, BODY: body },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding("utf8").once("data", (text: string) => resolve(text.trim()));
    child.once("exit", (code) => reject(new Error(`the floor server exited (${code})`)));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    name: "node-http",
    pid: child.pid!,
    url: new URL(`http://127.0.0.1:${port}${like.url.pathname}`),
    headers: like.headers,
    stop: async () => {
      child.kill();
      await exited;
    },
  };
}

/** Sends `rate` requests per second for `seconds`, each at its scheduled time. */
async function openLoop(target: Target, rate: number, seconds: number): Promise<StepResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number(flags.connections) });
  const headers = target.headers;
  const total = Math.round(rate * seconds);
  const latencies = new Float64Array(total);
  let done = 0;
  let errors = 0;
  let finished!: () => void;
  const allDone = new Promise<void>((resolve) => (finished = resolve));
  const answered = new Uint8Array(total);
  const complete = (index: number, scheduled: number, ok: boolean) => {
    // A request can both error and end (a reset after the headers): count it once.
    if (answered[index]) return;
    answered[index] = 1;
    latencies[index] = performance.now() - scheduled;
    if (!ok) errors++;
    if (++done === total) finished();
  };
  const send = (index: number, scheduled: number) => {
    const request = http.get(target.url, { agent, headers }, (response) => {
      response.resume();
      response.on("end", () => complete(index, scheduled, response.statusCode === 200));
      response.on("error", () => complete(index, scheduled, false));
    });
    request.on("error", () => complete(index, scheduled, false));
    request.setTimeout(REQUEST_TIMEOUT_MS, () => request.destroy(new Error("timed out")));
  };

  const cpuBefore = cpuTimes();
  const serviceBefore = processCpuSeconds(target.pid);
  const start = performance.now() + 5;
  const interval = 1000 / rate;
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < total && start + next * interval <= now) {
        send(next, start + next * interval);
        next++;
      }
      // A timer, not a busy loop: the load generator shares the two cores with the service.
      if (next < total) setTimeout(tick, Math.max(0, start + next * interval - performance.now()));
      else resolve();
    };
    tick();
  });
  const sendingEnded = performance.now();
  await allDone;
  const cpuAfter = cpuTimes();
  const serviceAfter = processCpuSeconds(target.pid);
  const serviceCpu =
    serviceAfter.user + serviceAfter.system - serviceBefore.user - serviceBefore.system;
  agent.destroy();
  const sorted = latencies.sort();
  return {
    target: target.name,
    rate,
    sent: total,
    achieved: total / ((sendingEnded - start) / 1000),
    errors,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1]!,
    cpuBusy: busyBetween(cpuBefore, cpuAfter),
    serviceCpuUs: (serviceCpu / total) * 1e6,
    serviceSystemUs: ((serviceAfter.system - serviceBefore.system) / total) * 1e6,
    load1: loadavg()[0]!,
  };
}

const ms = (value: number) => `${value.toFixed(1)} ms`.padStart(9);

function print(result: StepResult): void {
  console.log(
    `${result.target.padEnd(9)} ${String(result.rate).padStart(5)}/s  sent ${String(result.sent).padStart(6)} (${result.achieved.toFixed(0)}/s)  errors ${result.errors}  p50 ${ms(result.p50)}  p90 ${ms(result.p90)}  p99 ${ms(result.p99)}  max ${ms(result.max)}  service CPU ${result.serviceCpuUs.toFixed(0)} µs/req (system ${result.serviceSystemUs.toFixed(0)})  machine CPU ${(result.cpuBusy * 100).toFixed(0)}%  load ${result.load1.toFixed(1)}`,
  );
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const targets = [await startTarget("current")];
  if (flags.baseline) targets.unshift(await startTarget("baseline", flags.baseline));
  if (flags["with-rate-limit"]) {
    targets.push(await startTarget("limit-on", undefined, COUNTED_RATE_LIMIT));
  }
  if (flags.floor) targets.push(await startFloor(targets.find((t) => t.name === "current")!));
  try {
    for (const target of targets) {
      for (const { rate, seconds } of WARMUP) await openLoop(target, rate, seconds);
    }
    console.log(
      `GET /v3/svc/renders/{id}, open loop, ${SECONDS} s per step, latency from the scheduled send time; load average before: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`,
    );
    const results: StepResult[] = [];
    const passing = new Map<string, boolean>(targets.map((t) => [t.name, true]));
    for (const rate of RATES) {
      for (let rep = 0; rep < REPS; rep++) {
        for (const target of targets) {
          if (!explicitRates && !passing.get(target.name)) continue;
          const result = await openLoop(target, rate, SECONDS);
          results.push(result);
          print(result);
        }
      }
      for (const target of targets) {
        const mine = results.filter((r) => r.target === target.name && r.rate === rate);
        if (mine.length === 0) continue;
        const ok =
          median(mine.map((r) => r.p99)) < CEILING_P99_MS && mine.every((r) => r.errors === 0);
        if (!ok) passing.set(target.name, false);
      }
      // The default ladder stops once every target fails; rates given with --rates all run.
      if (!explicitRates && ![...passing.values()].some(Boolean)) break;
    }
    console.log(`\nSummary (median of ${REPS} per step):`);
    for (const target of targets) {
      const mine = results.filter((r) => r.target === target.name);
      const byRate = (rate: number) => mine.filter((r) => r.rate === rate);
      for (const rate of RATES) {
        const steps = byRate(rate);
        if (steps.length === 0) {
          console.log(
            `${target.name.padEnd(9)} ${String(rate).padStart(5)}/s  not run (a lower rate failed)`,
          );
          continue;
        }
        const errors = steps.reduce((n, r) => n + r.errors, 0);
        const passed = median(steps.map((r) => r.p99)) < CEILING_P99_MS && errors === 0;
        console.log(
          `${target.name.padEnd(9)} ${String(rate).padStart(5)}/s  p50 ${ms(median(steps.map((r) => r.p50)))}  p99 ${ms(median(steps.map((r) => r.p99)))}  errors ${errors}  service CPU ${median(steps.map((r) => r.serviceCpuUs)).toFixed(0)} µs/req (system ${median(steps.map((r) => r.serviceSystemUs)).toFixed(0)})  load ${steps.map((r) => r.load1.toFixed(1)).join("/")}  ${passed ? "ok" : "FAILED"}${rate === GOAL.rate ? ` (goal p99 < ${GOAL.p99Ms} ms: ${median(steps.map((r) => r.p99)) < GOAL.p99Ms && errors === 0 ? "met" : "not met"})` : ""}`,
        );
      }
      const sustained = RATES.filter((rate) => {
        const steps = byRate(rate);
        return (
          steps.length > 0 &&
          median(steps.map((r) => r.p99)) < CEILING_P99_MS &&
          steps.every((r) => r.errors === 0)
        );
      });
      console.log(
        `${target.name}: highest rate with p99 < ${CEILING_P99_MS} ms and no errors: ${sustained.length ? `${Math.max(...sustained)}/s` : "none of the steps"}`,
      );
    }
    if (flags["with-rate-limit"]) {
      for (const rate of RATES) {
        const cpuOf = (name: string) => {
          const steps = results.filter((r) => r.target === name && r.rate === rate);
          return steps.length ? median(steps.map((r) => r.serviceCpuUs)) : NaN;
        };
        const off = cpuOf("current");
        const on = cpuOf("limit-on");
        if (Number.isNaN(off) || Number.isNaN(on)) continue;
        console.log(
          `shared rate limit on, ${rate}/s: ${on.toFixed(0)} µs/req against ${off.toFixed(0)} off (${((on / off - 1) * 100).toFixed(0)}% more CPU; goal at most 20%)`,
        );
      }
    }
    console.log(
      `load average after: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`,
    );
  } finally {
    await Promise.all(targets.map((t) => t.stop()));
  }
}

await main();
