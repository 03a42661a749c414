// Account passwords and login throttling: scrypt from node:crypto (memory-hard, no native dependency) with a random
// salt per password, stored as `scrypt$N$r$p$salt$hash` so the cost can be raised later without
// breaking old hashes. Comparison is constant-time, and an unknown account is checked against a
// dummy hash so the answer takes the same time either way.
import { createHash, randomBytes, scrypt, type ScryptOptions } from "node:crypto";
import { sameSecret } from "../../node/index";
import type { User } from "./accounts";
import { findUserByEmail, passwordHash, upsertPasswordHash } from "./account-repository";
import type { Database } from "../db/database";
import { FailureCounts, type CountKey } from "../http/failed-credentials";

const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 64;
export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, cost: typeof COST): Promise<Buffer> {
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

export function checkPasswordStrength(password: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH)
    return `the password must have at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH)
    return `the password must have at most ${MAX_PASSWORD_LENGTH} characters`;
  return undefined;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return ["scrypt", COST.N, COST.r, COST.p, salt.toString("base64"), key.toString("base64")].join(
    "$",
  );
}

let dummyHash: Promise<string> | undefined;

/** Verifies `password` against a stored hash; with no hash, spends the same time and says no. */
export async function verifyPassword(
  password: string,
  stored: string | undefined,
): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  const hash = stored ?? (await (dummyHash ??= hashPassword(randomBytes(16).toString("hex"))));
  const parts = hash.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const salt = Buffer.from(parts[4]!, "base64");
  const expected = Buffer.from(parts[5]!, "base64");
  const actual = await derive(password, salt, { N, r, p });
  const same = sameSecret(expected, actual);
  return same && stored !== undefined;
}

/** Sets (or replaces) the password of an account. */
export async function setUserPassword(
  db: Database,
  userId: string,
  password: string,
  now = Date.now(),
): Promise<void> {
  const problem = checkPasswordStrength(password);
  if (problem) throw new Error(problem);
  await upsertPasswordHash(db, userId, await hashPassword(password), now);
}

/** The account for an email + password, or undefined (same time whether or not it exists). */
export async function checkUserPassword(
  db: Database,
  email: string,
  password: string,
): Promise<User | undefined> {
  const user = await findUserByEmail(db, email);
  const stored = user ? await passwordHash(db, user.id) : undefined;
  const ok = await verifyPassword(password, stored);
  return ok ? user : undefined;
}

/**
 * Login throttling: after `maxFailures` wrong passwords for one email (or 4x that from one
 * address) within a window of `windowMs`, sign-in is refused until the window ends. A success
 * clears the email's count. Counted in the service's `rate_limits` table (FailureCounts), so API
 * processes on one database share the lockout; the email is stored as a hash, not as typed.
 */
export class LoginThrottle {
  private readonly counts: FailureCounts;

  constructor(
    db: Database,
    private readonly maxFailures = 5,
    windowMs = 15 * 60_000,
    now: () => number = Date.now,
  ) {
    this.counts = new FailureCounts(db, windowMs, now);
  }

  private emailKey(email: string): string {
    const digest = createHash("sha256").update(email.trim().toLowerCase()).digest("hex");
    return `signin:email:${digest.slice(0, 32)}`;
  }

  private keys(email: string, address: string): CountKey[] {
    return [
      { key: this.emailKey(email), scope: "email", limit: this.maxFailures },
      { key: `signin:addr:${address}`, scope: "address", limit: this.maxFailures * 4 },
    ];
  }

  /** Seconds until `email` from `address` may try again; 0 when it may try now. */
  async retryAfterSeconds(email: string, address: string): Promise<number> {
    return (await this.counts.check(this.keys(email, address)))?.retryAfterSeconds ?? 0;
  }

  recordFailure(email: string, address: string): Promise<void> {
    return this.counts.record(this.keys(email, address));
  }

  recordSuccess(email: string): Promise<void> {
    return this.counts.forget(this.emailKey(email));
  }
}
