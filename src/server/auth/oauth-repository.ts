// Every query of the OAuth tables: authorization codes (oauth_codes), device codes
// (oauth_device_codes) and access / refresh tokens (oauth_tokens, by family), all stored as hashes.
// The grant rules (expiry, reuse detection, slow_down) are grants.ts's; a write that could race a
// second use carries a guard and says whether it won. Functions that are part of a grant's
// transaction take it as their `db`.
import type { Kysely } from "kysely";
import type { DB, OAuthCodesTable, OAuthDeviceCodesTable, OAuthTokensTable } from "../db/schema";

type Db = Kysely<DB>;

/** Deletes codes, device codes and tokens that expired before `before`. */
export async function deleteExpired(db: Db, before: number): Promise<void> {
  await db.deleteFrom("oauth_codes").where("expires_ms", "<", before).execute();
  await db.deleteFrom("oauth_device_codes").where("expires_ms", "<", before).execute();
  await db.deleteFrom("oauth_tokens").where("expires_ms", "<", before).execute();
}

export async function insertCode(db: Db, code: OAuthCodesTable): Promise<void> {
  await db.insertInto("oauth_codes").values(code).execute();
}

export function findCode(db: Db, codeHash: string): Promise<OAuthCodesTable | undefined> {
  return db
    .selectFrom("oauth_codes")
    .selectAll()
    .where("code_hash", "=", codeHash)
    .executeTakeFirst();
}

/** Marks a code used, for the token family it is exchanged for; false when it already was. */
export async function markCodeUsed(
  db: Db,
  codeHash: string,
  familyId: string,
  now: number,
): Promise<boolean> {
  const claimed = await db
    .updateTable("oauth_codes")
    .set({ used_ms: now, family_id: familyId })
    .where("code_hash", "=", codeHash)
    .where("used_ms", "is", null)
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) === 1;
}

export async function insertTokens(db: Db, tokens: OAuthTokensTable[]): Promise<void> {
  await db.insertInto("oauth_tokens").values(tokens).execute();
}

export function findRefreshToken(db: Db, tokenHash: string): Promise<OAuthTokensTable | undefined> {
  return db
    .selectFrom("oauth_tokens")
    .selectAll()
    .where("token_hash", "=", tokenHash)
    .where("kind", "=", "refresh")
    .executeTakeFirst();
}

/** Marks a refresh token used; false when it was already rotated or revoked. */
export async function markRotated(db: Db, tokenId: string, now: number): Promise<boolean> {
  const rotated = await db
    .updateTable("oauth_tokens")
    .set({ rotated_ms: now })
    .where("id", "=", tokenId)
    .where("rotated_ms", "is", null)
    .where("revoked_ms", "is", null)
    .executeTakeFirst();
  return Number(rotated.numUpdatedRows) === 1;
}

/** Revokes every token of a family (one sign-in) not revoked yet. */
export async function revokeFamilyTokens(db: Db, familyId: string, now: number): Promise<void> {
  await db
    .updateTable("oauth_tokens")
    .set({ revoked_ms: now })
    .where("family_id", "=", familyId)
    .where("revoked_ms", "is", null)
    .execute();
}

/** The family of a token of either kind, by its hash. */
export async function tokenFamily(db: Db, tokenHash: string): Promise<string | undefined> {
  const row = await db
    .selectFrom("oauth_tokens")
    .select(["family_id"])
    .where("token_hash", "=", tokenHash)
    .executeTakeFirst();
  return row?.family_id;
}

/** A token with its account, by the token's hash (the /v3 API's bearer check). */
export function findTokenAccount(db: Db, tokenHash: string) {
  return db
    .selectFrom("oauth_tokens")
    .innerJoin("users", "users.id", "oauth_tokens.user_id")
    .selectAll("users")
    .select([
      "oauth_tokens.family_id",
      "oauth_tokens.kind",
      "oauth_tokens.expires_ms",
      "oauth_tokens.revoked_ms",
    ])
    .where("oauth_tokens.token_hash", "=", tokenHash)
    .executeTakeFirst();
}

export async function insertDeviceCode(db: Db, deviceCode: OAuthDeviceCodesTable): Promise<void> {
  await db.insertInto("oauth_device_codes").values(deviceCode).execute();
}

export function findDeviceCode(
  db: Db,
  deviceCodeHash: string,
): Promise<OAuthDeviceCodesTable | undefined> {
  return db
    .selectFrom("oauth_device_codes")
    .selectAll()
    .where("device_code_hash", "=", deviceCodeHash)
    .executeTakeFirst();
}

/** Records a poll of a device code at `now`, with its interval raised when it was too early. */
export async function recordDevicePoll(
  db: Db,
  id: string,
  now: number,
  intervalSeconds?: number,
): Promise<void> {
  await db
    .updateTable("oauth_device_codes")
    .set({
      last_poll_ms: now,
      ...(intervalSeconds !== undefined ? { interval_seconds: intervalSeconds } : {}),
    })
    .where("id", "=", id)
    .execute();
}

/** Marks an approved device code used; false when it was not approved (or already used). */
export async function markDeviceCodeUsed(db: Db, id: string): Promise<boolean> {
  const claimed = await db
    .updateTable("oauth_device_codes")
    .set({ status: "used" })
    .where("id", "=", id)
    .where("status", "=", "approved")
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) === 1;
}

/** A device code still waiting for a person at `now`, by the user code they typed. */
export function findPendingDeviceCode(db: Db, userCode: string, now: number) {
  return db
    .selectFrom("oauth_device_codes")
    .select(["user_code", "client_id", "scope"])
    .where("user_code", "=", userCode)
    .where("status", "=", "pending")
    .where("expires_ms", ">", now)
    .executeTakeFirst();
}

/** The person's answer to a pending device code; false when it is no longer pending. */
export async function decideDeviceCode(
  db: Db,
  userCode: string,
  decision: { approve: boolean; userId: string; now: number },
): Promise<boolean> {
  const result = await db
    .updateTable("oauth_device_codes")
    .set({ status: decision.approve ? "approved" : "denied", user_id: decision.userId })
    .where("user_code", "=", userCode)
    .where("status", "=", "pending")
    .where("expires_ms", ">", decision.now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
