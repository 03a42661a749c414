// Every query of the accounts: the users row (its credit balance, the lock that orders an
// account's submits), its API keys (stored as hashes) and its password hash. Rules (what a key
// looks like, how a password is hashed, who may be charged) live with their callers.
import type { Kysely, Transaction } from "kysely";
import type { ApiKeysTable, DB, UsersTable } from "../db/schema";

type Db = Kysely<DB>;

export async function insertUser(db: Db, user: UsersTable): Promise<void> {
  await db.insertInto("users").values(user).execute();
}

export function findUserByEmail(db: Db, email: string): Promise<UsersTable | undefined> {
  return db
    .selectFrom("users")
    .selectAll()
    .where("email", "=", email.trim().toLowerCase())
    .executeTakeFirst();
}

export async function insertApiKey(db: Db, key: ApiKeysTable): Promise<void> {
  await db.insertInto("api_keys").values(key).execute();
}

/** The account of an API key by the key's hash, with the key's id and revocation. */
export function findByApiKeyHash(db: Db, keyHash: string) {
  return db
    .selectFrom("api_keys")
    .innerJoin("users", "users.id", "api_keys.user_id")
    .selectAll("users")
    .select(["api_keys.id as credential_id", "api_keys.revoked_ms"])
    .where("api_keys.key_hash", "=", keyHash)
    .executeTakeFirst();
}

/** The account's balance now, in milli-credits (never from a cached principal). */
export async function creditsRemainingMilli(db: Db, userId: string): Promise<number> {
  const user = await db
    .selectFrom("users")
    .select("credits_remaining_milli")
    .where("id", "=", userId)
    .executeTakeFirstOrThrow();
  return user.credits_remaining_milli;
}

/**
 * Locks the account's row for the transaction, ordering its submits and admits (render/admission.ts).
 * `forUpdate` only on PostgreSQL: SQLite has one writer anyway and has no FOR UPDATE.
 */
export async function lockAccount(
  trx: Transaction<DB>,
  userId: string,
  forUpdate: boolean,
): Promise<void> {
  const query = trx.selectFrom("users").select("id").where("id", "=", userId);
  await (forUpdate ? query.forUpdate() : query).execute();
}

/** Adds to the account's balance; the new balance in milli-credits. */
export async function addCreditsMilli(db: Db, userId: string, milli: number): Promise<number> {
  const row = await db
    .updateTable("users")
    .set((eb) => ({ credits_remaining_milli: eb("credits_remaining_milli", "+", milli) }))
    .where("id", "=", userId)
    .returning("credits_remaining_milli")
    .executeTakeFirstOrThrow();
  return row.credits_remaining_milli;
}

/** Takes a completed render's price from the balance and adds it to what was used. */
export async function chargeCredits(
  trx: Transaction<DB>,
  userId: string,
  milli: number,
): Promise<void> {
  await trx
    .updateTable("users")
    .set((eb) => ({
      credits_remaining_milli: eb("credits_remaining_milli", "-", milli),
      credits_used_milli: eb("credits_used_milli", "+", milli),
    }))
    .where("id", "=", userId)
    .execute();
}

/** The secret the account's webhooks are signed with, or undefined for a deleted account. */
export async function webhookSecret(db: Db, userId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("users")
    .select("webhook_secret")
    .where("id", "=", userId)
    .executeTakeFirst();
  return row?.webhook_secret;
}

/** Sets (or replaces) the account's password hash. */
export async function upsertPasswordHash(
  db: Db,
  userId: string,
  passwordHash: string,
  now: number,
): Promise<void> {
  await db
    .insertInto("user_passwords")
    .values({ user_id: userId, password_hash: passwordHash, updated_ms: now })
    .onConflict((oc) =>
      oc.column("user_id").doUpdateSet({ password_hash: passwordHash, updated_ms: now }),
    )
    .execute();
}

export async function passwordHash(db: Db, userId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("user_passwords")
    .select("password_hash")
    .where("user_id", "=", userId)
    .executeTakeFirst();
  return row?.password_hash;
}
