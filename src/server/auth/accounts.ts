// Accounts and API keys. Keys are 160+ bits of randomness, so they are stored as a SHA-256 hash
// (no slow hash needed) and shown exactly once, when created. The first start in a new data dir
// creates a local account and writes its key to `<data-dir>/credentials` (0600).
import { hash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { writeJsonFileAtomic } from "../../node/index";
import type { Database } from "../db/database";
import type { UsersTable } from "../db/schema";
import { newId, randomToken } from "../ids";
import { toMilli } from "../render/credits";
import { findByApiKeyHash, findUserByEmail, insertApiKey, insertUser } from "./account-repository";

export const API_KEY_PREFIX = "svc_key_";
export const LOCAL_ACCOUNT_EMAIL = "local@localhost";

export type User = UsersTable;

export function hashApiKey(key: string): string {
  // The one-shot hash: no Hash object per call (a poll hashes its key on every request).
  return hash("sha256", key, "hex");
}

export async function createUser(
  db: Database,
  input: { email: string; credits?: number; plan?: string; firstName?: string; lastName?: string },
  now = Date.now(),
): Promise<User> {
  const email = input.email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new Error(`"${input.email}" is not an email address`);
  const existing = await findUserByEmail(db, email);
  if (existing) throw new Error(`a user with email ${email} already exists`);
  const user: User = {
    id: newId("user_"),
    email,
    username: email.split("@")[0]!,
    first_name: input.firstName ?? null,
    last_name: input.lastName ?? null,
    plan: input.plan ?? "local",
    credits_remaining_milli: toMilli(input.credits ?? 0),
    credits_used_milli: 0,
    webhook_secret: `whsec_${randomBytes(24).toString("hex")}`,
    created_ms: now,
  };
  await insertUser(db, user);
  return user;
}

/** Creates an API key for a user and returns the plaintext key: the only time it exists. */
export async function createApiKey(
  db: Database,
  userId: string,
  now = Date.now(),
): Promise<string> {
  const key = `${API_KEY_PREFIX}${randomToken(40)}`;
  await insertApiKey(db, {
    id: newId("key_"),
    user_id: userId,
    key_hash: hashApiKey(key),
    key_prefix: key.slice(0, API_KEY_PREFIX.length + 4),
    created_ms: now,
    revoked_ms: null,
  });
  return key;
}

export interface Principal {
  user: User;
  /** Stable id of the credential, used to scope rate limits. */
  credentialId: string;
}

export async function authenticateApiKey(
  db: Database,
  key: string,
): Promise<Principal | undefined> {
  const row = await findByApiKeyHash(db, hashApiKey(key));
  if (!row || row.revoked_ms !== null) return undefined;
  const { credential_id, revoked_ms: _revoked, ...user } = row;
  return { user, credentialId: credential_id };
}

/**
 * Authenticates API keys with a short in-memory cache, so a client polling several times a
 * second costs one key lookup per few seconds. Only the account id is taken from a cached
 * principal (balances are always read fresh), so the cache can only delay a revocation by `ttlMs`
 * (5 s: a revoked key keeps working at most that long on each API process that had just seen it).
 * Keyed by the key's hash, at most 10,000 keys a process (then emptied).
 */
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, { principal: Principal; expires: number }>();

  constructor(
    private readonly db: Database,
    private readonly ttlMs = 5_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The principal of a key this process accepted less than `ttlMs` ago, without a query. */
  cached(key: string): Principal | undefined {
    const hit = this.cache.get(hashApiKey(key));
    return hit && hit.expires > this.now() ? hit.principal : undefined;
  }

  /** `beforeLookup` runs when the key is not in the cache (the failed-credential throttle). */
  async authenticate(
    key: string,
    beforeLookup?: () => Promise<void>,
  ): Promise<Principal | undefined> {
    const hash = hashApiKey(key);
    const hit = this.cache.get(hash);
    if (hit && hit.expires > this.now()) return hit.principal;
    await beforeLookup?.();
    const principal = await authenticateApiKey(this.db, key);
    if (this.cache.size > 10_000) this.cache.clear();
    if (principal) this.cache.set(hash, { principal, expires: this.now() + this.ttlMs });
    else this.cache.delete(hash);
    return principal;
  }
}

export interface LocalCredentials {
  api_key: string;
  email: string;
  webhook_secret: string;
}

/**
 * On first start in a data dir: create the local account with a key and plenty of credits, and
 * write `<dataDir>/credentials` (0600). Returns undefined when the account already exists.
 */
export async function ensureLocalAccount(
  db: Database,
  dataDir: string,
  credits: number,
): Promise<{ credentialsFile: string; email: string } | undefined> {
  const credentialsFile = join(dataDir, "credentials");
  if (await findUserByEmail(db, LOCAL_ACCOUNT_EMAIL)) return undefined;
  const user = await createUser(db, { email: LOCAL_ACCOUNT_EMAIL, credits, plan: "local" });
  const apiKey = await createApiKey(db, user.id);
  const body: LocalCredentials = {
    api_key: apiKey,
    email: user.email,
    webhook_secret: user.webhook_secret,
  };
  await writeJsonFileAtomic(credentialsFile, body);
  return { credentialsFile, email: user.email };
}
