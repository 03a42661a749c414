// Every query of the assets table: a new asset waiting for its upload, an account's asset, the
// checksum learnt at completion, the earlier identical asset an upload is deduplicated against,
// and the asset filed ready (under its content address or pointing at its original).
import type { Kysely } from "kysely";
import type { AssetsTable, DB } from "../db/schema";

type Db = Kysely<DB>;

export async function insertAsset(db: Db, asset: AssetsTable): Promise<void> {
  await db.insertInto("assets").values(asset).execute();
}

/** An asset of the account, whatever its status. */
export function findAccountAsset(
  db: Db,
  userId: string,
  assetId: string,
): Promise<AssetsTable | undefined> {
  return db
    .selectFrom("assets")
    .selectAll()
    .where("id", "=", assetId)
    .where("user_id", "=", userId)
    .executeTakeFirst();
}

/** Where a ready asset's zip is stored (a worker reads a render's project from it). */
export async function assetStorageKey(db: Db, assetId: string): Promise<string | undefined> {
  const asset = await db
    .selectFrom("assets")
    .select("storage_key")
    .where("id", "=", assetId)
    .executeTakeFirst();
  return asset?.storage_key ?? undefined;
}

/** The SHA-256 computed from the uploaded bytes, for an asset created without one. */
export async function setChecksum(db: Db, assetId: string, checksum: string): Promise<void> {
  await db
    .updateTable("assets")
    .set({ checksum_sha256: checksum })
    .where("id", "=", assetId)
    .execute();
}

/** The account's oldest ready asset with the same bytes as `asset` (not a duplicate itself). */
export function findOriginalOf(db: Db, asset: AssetsTable): Promise<AssetsTable | undefined> {
  return db
    .selectFrom("assets")
    .selectAll()
    .where("user_id", "=", asset.user_id)
    .where("checksum_sha256", "=", asset.checksum_sha256)
    .where("status", "=", "ready")
    .where("duplicate_of", "is", null)
    .where("id", "!=", asset.id)
    .orderBy("created_ms")
    .executeTakeFirst();
}

/** The asset is ready, read from `storageKey` (its own, or its original's when a duplicate). */
export async function markReady(
  db: Db,
  assetId: string,
  ready: { storageKey: string; duplicateOf?: string; now: number },
): Promise<void> {
  await db
    .updateTable("assets")
    .set({
      status: "ready",
      storage_key: ready.storageKey,
      ...(ready.duplicateOf !== undefined ? { duplicate_of: ready.duplicateOf } : {}),
      completed_ms: ready.now,
    })
    .where("id", "=", assetId)
    .execute();
}
