// Throttles failed credentials (issue 41): wrong or revoked API keys and access tokens on /v3,
// and refused OAuth grants, counted per client address and per key prefix (`svc_key_` and the
// next 4 characters). A client or prefix that reached its limit is answered 429 with Retry-After
// until its window ends, before its credential is even looked up, so the right key sent after
// the limit is refused too: an answer could otherwise tell a guesser which key is right. A
// credential this process accepted in the last few seconds (the authenticators' caches) is not
// checked again, so a client polling with its key costs no query here.
//
// The counts live in the service's `rate_limits` table (countRequest of rate-limit.ts), so API
// processes on one database share them. Unlike the request rate limit, every failure is counted
// in the database as it happens, not reconciled a second later: a legitimate client rarely fails,
// an attacker is what makes failures, and exact counts make "the limit, then 429 on every
// process" hold. A process remembers what it saw blocked and refuses those without a query.
// Nothing here logs or stores a key: the stored prefix is what `api_keys.key_prefix` holds anyway.
import type { Database } from "../db/database";
import { API_KEY_PREFIX } from "../auth/accounts";
import { countRequest } from "./rate-limit";

/** How much of a credential names its prefix: `svc_key_` plus 4 of its random characters. */
export const KEY_PREFIX_LENGTH = API_KEY_PREFIX.length + 4;

export interface FailureLimits {
  /** Failures per client address per window; 0: not limited. */
  perClient: number;
  /** Failures per key prefix per window, from any client; 0: not limited. */
  perKeyPrefix: number;
  windowMs: number;
}

/** Why attempts are refused, and for how long. */
export interface Throttled {
  scope: string;
  retryAfterSeconds: number;
}

/** One count: its key in `rate_limits`, what a refusal names, and the failures it allows. */
export interface CountKey {
  key: string;
  scope: string;
  limit: number;
}

/**
 * Failures counted in the shared `rate_limits` table, each as it happens, with what this process
 * saw blocked remembered until its window ends. The failed-credential throttle and the sign-in
 * page's lockout (auth/passwords.ts) count with it.
 */
export class FailureCounts {
  /** Keys this process saw at their limit, with the end of their window. */
  private readonly blocked = new Map<string, number>();

  constructor(
    private readonly db: Database,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Undefined when every key is under its limit; else the longest wait. */
  async check(keys: CountKey[]): Promise<Throttled | undefined> {
    if (keys.length === 0) return undefined;
    const now = this.now();
    const known = this.knownBlock(keys, now);
    if (known) return known;
    const rows = await this.db
      .selectFrom("rate_limits")
      .select(["key", "hits", "window_end_ms"])
      .where(
        "key",
        "in",
        keys.map((k) => k.key),
      )
      .where("window_end_ms", ">", now)
      .execute();
    for (const row of rows) {
      const spec = keys.find((k) => k.key === row.key);
      if (spec && Number(row.hits) >= spec.limit) this.block(row.key, Number(row.window_end_ms));
    }
    return this.knownBlock(keys, now);
  }

  /** Counts one failure on each key. */
  async record(keys: CountKey[]): Promise<void> {
    const now = this.now();
    for (const spec of keys) {
      const count = await countRequest(this.db, spec.key, this.windowMs, now);
      if (count.current >= spec.limit) this.block(spec.key, now + count.ttl);
    }
  }

  /** Forgets a key's failures (a success that clears them). */
  async forget(key: string): Promise<void> {
    this.blocked.delete(key);
    await this.db.deleteFrom("rate_limits").where("key", "=", key).execute();
  }

  private knownBlock(keys: CountKey[], now: number): Throttled | undefined {
    let found: Throttled | undefined;
    for (const spec of keys) {
      const until = this.blocked.get(spec.key);
      if (until === undefined) continue;
      if (until <= now) {
        this.blocked.delete(spec.key);
        continue;
      }
      const retryAfterSeconds = Math.max(1, Math.ceil((until - now) / 1000));
      if (!found || retryAfterSeconds > found.retryAfterSeconds) {
        found = { scope: spec.scope, retryAfterSeconds };
      }
    }
    return found;
  }

  private block(key: string, until: number): void {
    if (this.blocked.size > 100_000) {
      const now = this.now();
      for (const [name, end] of this.blocked) if (end <= now) this.blocked.delete(name);
    }
    this.blocked.set(key, until);
  }
}

export class FailedCredentialThrottle {
  private readonly counts: FailureCounts;

  constructor(
    db: Database,
    private readonly limits: FailureLimits,
    now: () => number = Date.now,
  ) {
    this.counts = new FailureCounts(db, limits.windowMs, now);
  }

  get enabled(): boolean {
    return this.limits.perClient > 0 || this.limits.perKeyPrefix > 0;
  }

  /**
   * Whether `client` may have `credential` checked now: undefined, or why not. Reads the shared
   * counts unless this process already knows the answer.
   */
  check(client: string, credential?: string): Promise<Throttled | undefined> {
    return this.counts.check(this.keysOf(client, credential));
  }

  /** Counts one failure of `client` with `credential`. */
  recordFailure(client: string, credential?: string): Promise<void> {
    return this.counts.record(this.keysOf(client, credential));
  }

  private keysOf(client: string, credential: string | undefined): CountKey[] {
    const keys: CountKey[] = [];
    if (this.limits.perClient > 0) {
      keys.push({
        key: `auth-failures:client:${client}`,
        scope: "client",
        limit: this.limits.perClient,
      });
    }
    if (credential && this.limits.perKeyPrefix > 0) {
      keys.push({
        key: `auth-failures:prefix:${credential.slice(0, KEY_PREFIX_LENGTH)}`,
        scope: "key_prefix",
        limit: this.limits.perKeyPrefix,
      });
    }
    return keys;
  }
}

/** The sentence a throttled client reads. */
export function throttledMessage(throttled: Throttled): string {
  const who =
    throttled.scope === "client"
      ? "from this address"
      : "with keys that start like this one, from any address";
  return `too many failed credentials ${who}; retry in ${throttled.retryAfterSeconds} s`;
}
