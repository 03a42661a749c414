// Small pure rules of the service: billing, webhook backoff and signature, rate limit, and the
// address classes the SSRF guard refuses.
import { createHmac } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderCostMilli } from "./render/credits";
import { checkTarget, isPrivateAddress, OutboundError } from "./webhooks/outbound";
import { countRequest, SharedWindowCounter } from "./http/rate-limit";
import { openSqliteDatabase } from "./db/sqlite";
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
  it("counts a key's requests in its window in the database, and starts a new window after it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-rate-limit-"));
    const db = await openSqliteDatabase(join(dir, "svc.db"));
    try {
      const hits = [];
      for (let i = 0; i < 3; i++) hits.push(await countRequest(db, "k", 60_000, 1_000 + i));
      expect(hits).toEqual([
        { current: 1, ttl: 60_000 },
        { current: 2, ttl: 59_999 },
        { current: 3, ttl: 59_998 },
      ]);
      expect(await countRequest(db, "other", 60_000, 2_000)).toEqual({ current: 1, ttl: 60_000 });
      expect(await countRequest(db, "k", 60_000, 61_000)).toEqual({ current: 1, ttl: 60_000 });
    } finally {
      await db.destroy();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("rate limit shared by processes", () => {
  /** Two processes' counters on one database, at a time the test sets. */
  async function twoProcesses(max: number) {
    const dir = await mkdtemp(join(tmpdir(), "svc-rate-limit-"));
    const db = await openSqliteDatabase(join(dir, "svc.db"));
    const clock = { now: 1_000 };
    const a = new SharedWindowCounter(db, max, 60_000, () => clock.now);
    const b = new SharedWindowCounter(db, max, 60_000, () => clock.now);
    const stored = async () =>
      (await db.selectFrom("rate_limits").select("hits").where("key", "=", "k").executeTakeFirst())
        ?.hits ?? 0;
    const close = async () => {
      await db.destroy();
      await rm(dir, { recursive: true, force: true });
    };
    return { db, clock, a, b, stored, close };
  }

  it("admits a key below half its limit without a query, and adds those requests on reconcile", async () => {
    const { a, stored, close } = await twoProcesses(100);
    try {
      expect(await a.count("k")).toEqual({ current: 1, ttl: 60_000 });
      const local = a.count("k");
      expect(local).not.toBeInstanceOf(Promise);
      expect(local).toEqual({ current: 2, ttl: 60_000 });
      for (let i = 0; i < 10; i++) a.count("k");
      expect(await stored()).toBe(1);
      await a.reconcile();
      expect(await stored()).toBe(12);
      await a.reconcile();
      expect(await stored()).toBe(12);
    } finally {
      await close();
    }
  });

  it("counts every request in the database past half the limit, so the one over it is refused by either process", async () => {
    const { a, b, close } = await twoProcesses(8);
    try {
      const counts: number[] = [];
      for (let i = 0; i < 10; i++) counts.push((await (i % 2 ? b : a).count("k")).current);
      // Each process admitted a few on its own (below 4); the database caught up before the limit.
      expect(counts.slice(8).every((current) => current > 8)).toBe(true);
      expect(counts.filter((current) => current <= 8)).toHaveLength(8);
    } finally {
      await close();
    }
  });

  it("starts a new window when the old one ends, without carrying its requests", async () => {
    const { a, clock, stored, close } = await twoProcesses(100);
    try {
      await a.count("k");
      a.count("k");
      clock.now += 60_000;
      expect(await a.count("k")).toEqual({ current: 1, ttl: 60_000 });
      expect(await stored()).toBe(1);
    } finally {
      await close();
    }
  });

  it("keeps locally admitted requests when the database cannot be reached, and adds them later", async () => {
    const { db, a, stored, close } = await twoProcesses(100);
    try {
      await a.count("k");
      a.count("k");
      a.count("k");
      await db.schema.alterTable("rate_limits").renameTo("rate_limits_away").execute();
      await expect(a.reconcile()).rejects.toThrow();
      await db.schema.alterTable("rate_limits_away").renameTo("rate_limits").execute();
      await a.reconcile();
      expect(await stored()).toBe(3);
    } finally {
      await close();
    }
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

  it("refuses an unresolvable name, a name of a private or loopback address and a private literal with one answer", async () => {
    // A resolver standing in for a network's internal names (the real one cannot be told what
    // internal.test is; api.test.ts refuses localhost and a name that does not resolve).
    const names: Record<string, string> = {
      "db.internal.test": "10.0.3.7",
      "admin.internal.test": "127.0.0.1",
      "metadata.internal.test": "169.254.169.254",
    };
    const resolve = async (host: string) => {
      const address = names[host];
      if (!address)
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
      return [{ address, family: 4 }];
    };
    const answers = new Set<string>();
    for (const host of [...Object.keys(names), "missing.internal.test", "10.0.3.7", "127.0.0.1"]) {
      const error = await checkTarget(`https://${host}/hook`, {
        allowPrivate: false,
        allowHttpLoopback: false,
        resolve,
      }).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error, host).toBeInstanceOf(OutboundError);
      const { reason, message } = error as OutboundError;
      const said = message.replace(host, "HOST");
      expect(said).not.toMatch(/resolv|private|loopback|link-local|ENOTFOUND|10\.0|127\.|169\./i);
      answers.add(`${reason}: ${said}`);
    }
    expect([...answers]).toEqual([
      "refused_target: HOST is not a public address the service may reach",
    ]);
    // Plain http is refused before the name is looked up: the same answer for every host.
    for (const host of ["db.internal.test", "missing.internal.test"]) {
      await expect(
        checkTarget(`http://${host}/hook`, {
          allowPrivate: false,
          allowHttpLoopback: false,
          resolve,
        }),
      ).rejects.toThrow("the URL must use https");
    }
  });
});
