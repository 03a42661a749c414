// Per-credential rate limit: a token bucket refilled continuously at `perMinute` tokens a minute,
// holding at most `perMinute` tokens. In memory: one API process in the embedded setup; the
// scale-out setup would put the buckets in Redis or Postgres behind the same `take`.
export interface RateLimitDecision {
  allowed: boolean;
  /** Whole seconds until one token is available again (for Retry-After). */
  retryAfterSeconds: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; updated: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  take(credentialId: string): RateLimitDecision {
    if (this.perMinute <= 0) return { allowed: true, retryAfterSeconds: 0 };
    const now = this.now();
    const ratePerMs = this.perMinute / 60_000;
    const bucket = this.buckets.get(credentialId) ?? { tokens: this.perMinute, updated: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.updated) * ratePerMs);
    bucket.updated = now;
    this.buckets.set(credentialId, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0 };
    }
    return {
      allowed: false,
      retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerMs / 1000)),
    };
  }
}
