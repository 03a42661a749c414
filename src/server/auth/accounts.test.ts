import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Database } from "../db/database";
import { openSqliteDatabase } from "../db/sqlite";
import { ApiKeyAuthenticator, createApiKey, createUser, hashApiKey } from "./accounts";

let dir: string;
let db: Database;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-accounts-"));
  db = await openSqliteDatabase(join(dir, "svc.db"));
});

afterEach(async () => {
  await db.destroy();
  await rm(dir, { recursive: true, force: true });
});

describe("ApiKeyAuthenticator", () => {
  it("refuses a revoked key once its cached acceptance is older than the TTL, and not before", async () => {
    let now = 1_000_000;
    const user = await createUser(db, { email: "ada@example.com" });
    const key = await createApiKey(db, user.id);
    const authenticator = new ApiKeyAuthenticator(db, 5_000, () => now);

    expect((await authenticator.authenticate(key))?.user.id).toBe(user.id);
    expect(authenticator.cached(key)?.user.id).toBe(user.id);
    await db
      .updateTable("api_keys")
      .set({ revoked_ms: now })
      .where("key_hash", "=", hashApiKey(key))
      .execute();

    // Within the TTL this process still answers from what it checked moments ago...
    now += 4_999;
    expect(authenticator.cached(key)?.user.id).toBe(user.id);
    // ...and from then on the revocation holds.
    now += 2;
    expect(authenticator.cached(key)).toBeUndefined();
    expect(await authenticator.authenticate(key)).toBeUndefined();
    expect(authenticator.cached(key)).toBeUndefined();
  });

  it("never caches a key it refused", async () => {
    const authenticator = new ApiKeyAuthenticator(db);
    const key = "svc_key_" + "x".repeat(40);
    expect(await authenticator.authenticate(key)).toBeUndefined();
    expect(authenticator.cached(key)).toBeUndefined();
  });
});
