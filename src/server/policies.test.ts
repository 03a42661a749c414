// Small pure rules of the service: billing, webhook backoff and signature, rate limit, and the
// address classes the SSRF guard refuses.
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { renderCostMilli } from "./render/credits";
import { isPrivateAddress } from "./webhooks/outbound";
import { RateLimiter } from "./http/rate-limit";
import { backoffMs, signWebhook } from "./webhooks/webhooks";

describe("billing", () => {
  it("charges 1 credit per started second, and 1.5x for 4k", () => {
    expect(renderCostMilli(1, "1080p")).toBe(1000);
    expect(renderCostMilli(1.2, "1080p")).toBe(2000);
    expect(renderCostMilli(2.0000001, "1080p")).toBe(2000);
    expect(renderCostMilli(0.2, "1080p")).toBe(1000);
    expect(renderCostMilli(3, "4k")).toBe(4500);
    expect(renderCostMilli(1, "4k")).toBe(1500);
  });
});

describe("webhooks", () => {
  it("backs off exponentially up to the cap", () => {
    expect([1, 2, 3, 4, 5].map((attempt) => backoffMs(attempt, 1000, 5000))).toEqual([
      1000, 2000, 4000, 5000, 5000,
    ]);
  });

  it("signs t.body with HMAC-SHA256", () => {
    const expected = createHmac("sha256", "whsec_x").update('12.{"a":1}').digest("hex");
    expect(signWebhook("whsec_x", 12, '{"a":1}')).toBe(`t=12,v1=${expected}`);
  });
});

describe("rate limit", () => {
  it("allows a burst of the per-minute rate, then asks to retry, then refills", () => {
    let now = 0;
    const limiter = new RateLimiter(60, () => now);
    for (let i = 0; i < 60; i++) expect(limiter.take("k").allowed).toBe(true);
    expect(limiter.take("k")).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(limiter.take("other").allowed).toBe(true);
    now += 1000;
    expect(limiter.take("k").allowed).toBe(true);
  });
});

describe("SSRF guard", () => {
  it("classifies loopback, private, link-local and mapped addresses as private", () => {
    for (const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "0.0.0.0",
      "::1",
      "fe80::1",
      "fd00::1",
      "::ffff:127.0.0.1",
      "100.64.0.1",
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"]) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });
});
