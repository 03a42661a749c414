// The HTTP request series the service keeps as plain numbers, read back as a scrape reads them.
import { expect, it } from "vitest";
import { ServiceMetrics } from "./metrics";

function line(text: string, prefix: string): number | undefined {
  const found = text.split("\n").find((l) => l.startsWith(prefix));
  return found === undefined ? undefined : Number(found.slice(found.lastIndexOf(" ") + 1));
}

it("scrapes request counts and cumulative latency buckets per method, route and status", async () => {
  const metrics = new ServiceMetrics(undefined, { role: "api" });
  for (const seconds of [0.003, 0.03, 0.03, 40])
    metrics.http.observe("GET", "/r/:id", 200, seconds);
  metrics.http.observe("GET", "/r/:id", 404, 0.001);
  const { body } = await metrics.scrape();
  const labels = 'method="GET",route="/r/:id",status="200"';
  expect(line(body, `svc_http_requests_total{${labels},role="api"}`)).toBe(4);
  expect(line(body, `svc_http_requests_total{method="GET",route="/r/:id",status="404"`)).toBe(1);
  const bucket = (le: string) =>
    line(body, `svc_http_request_duration_seconds_bucket{${labels},le="${le}"`);
  expect([bucket("0.005"), bucket("0.025"), bucket("0.05"), bucket("30"), bucket("+Inf")]).toEqual([
    1, 1, 3, 3, 4,
  ]);
  expect(line(body, `svc_http_request_duration_seconds_sum{${labels}`)).toBeCloseTo(40.063);
  expect(line(body, `svc_http_request_duration_seconds_count{${labels}`)).toBe(4);
  expect(body).toContain("# TYPE svc_http_request_duration_seconds histogram");
});
