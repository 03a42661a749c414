// Account passwords and login throttling: scrypt from node:crypto (memory-hard, no native dependency) with a random
// salt per password, stored as `scrypt$N$r$p$salt$hash` so the cost can be raised later without
// breaking old hashes. Comparison is constant-time, and an unknown account is checked against a
// dummy hash so the answer takes the same time either way.
import { randomBytes, scrypt, type ScryptOptions } from "node:crypto";
import { sameSecret } from "../../node/index";
import { findUserByEmail, type User } from "./accounts";
import type { Database } from "../db/database";

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
  const passwordHash = await hashPassword(password);
  await db
    .insertInto("user_passwords")
    .values({ user_id: userId, password_hash: passwordHash, updated_ms: now })
    .onConflict((oc) =>
      oc.column("user_id").doUpdateSet({ password_hash: passwordHash, updated_ms: now }),
    )
    .execute();
}

/** The account for an email + password, or undefined (same time whether or not it exists). */
export async function checkUserPassword(
  db: Database,
  email: string,
  password: string,
): Promise<User | undefined> {
  const user = await findUserByEmail(db, email);
  const row = user
    ? await db
        .selectFrom("user_passwords")
        .select("password_hash")
        .where("user_id", "=", user.id)
        .executeTakeFirst()
    : undefined;
  const ok = await verifyPassword(password, row?.password_hash);
  return ok ? user : undefined;
}

/**
 * Login throttling, in memory like the rate limiter: after `maxFailures` wrong passwords for one
 * email (or 4x that from one address) within `windowMs`, sign-in is refused until the window
 * ends. A success clears the email's count.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly maxFailures = 5,
    private readonly windowMs = 15 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  private recent(key: string): number[] {
    const since = this.now() - this.windowMs;
    const list = (this.failures.get(key) ?? []).filter((at) => at > since);
    if (list.length === 0) this.failures.delete(key);
    else this.failures.set(key, list);
    return list;
  }

  /** Seconds until `email` from `address` may try again; 0 when it may try now. */
  retryAfterSeconds(email: string, address: string): number {
    const checks: Array<[string, number]> = [
      [`email:${email.trim().toLowerCase()}`, this.maxFailures],
      [`addr:${address}`, this.maxFailures * 4],
    ];
    let wait = 0;
    for (const [key, limit] of checks) {
      const list = this.recent(key);
      if (list.length >= limit) {
        wait = Math.max(
          wait,
          Math.ceil((list[list.length - limit]! + this.windowMs - this.now()) / 1000),
        );
      }
    }
    return wait;
  }

  recordFailure(email: string, address: string): void {
    if (this.failures.size > 100_000) this.failures.clear();
    for (const key of [`email:${email.trim().toLowerCase()}`, `addr:${address}`]) {
      this.failures.set(key, [...this.recent(key), this.now()]);
    }
  }

  recordSuccess(email: string): void {
    this.failures.delete(`email:${email.trim().toLowerCase()}`);
  }
}
