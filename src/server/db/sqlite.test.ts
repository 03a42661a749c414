// The reading connection's stamp: this process's writes change it at once, another process's
// commits once SQLite's data_version is read again (every 10 ms), and reads alone do not.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Database } from "./database";
import { openSqliteDatabase, sameStamp, sqliteReaderOf, type SqliteReader } from "./sqlite";

let dir: string;
let db: Database;
let reader: SqliteReader;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-sqlite-"));
  db = await openSqliteDatabase(join(dir, "svc.db"));
  reader = sqliteReaderOf(db)!;
});

afterAll(async () => {
  await db?.destroy();
  await rm(dir, { recursive: true, force: true });
});

const user = (id: string) => ({
  id,
  username: id,
  email: `${id}@example.com`,
  first_name: "",
  last_name: "",
  plan: "free",
  credits_remaining_milli: 0,
  credits_used_milli: 0,
  webhook_secret: "secret",
  created_ms: 0,
});

it("changes at once when this process writes, and reads the committed row", async () => {
  const before = reader.stamp(1_000);
  await db.insertInto("users").values(user("user_a")).execute();
  // The same instant: no data_version read, the service's own statement is what changed it.
  expect(sameStamp(reader.stamp(1_000), before)).toBe(false);
  const rows = reader.all<{ id: string }>("select id from users where id = ?", ["user_a"]);
  expect(rows).toEqual([{ id: "user_a" }]);
});

it("changes once data_version is read again after another process commits", () => {
  const before = reader.stamp(2_000);
  const other = new BetterSqlite3(join(dir, "svc.db"));
  try {
    other.prepare("update users set last_name = 'B' where id = ?").run("user_a");
  } finally {
    other.close();
  }
  expect(sameStamp(reader.stamp(2_005), before)).toBe(true);
  expect(sameStamp(reader.stamp(2_010), before)).toBe(false);
});

it("stays the same while nothing is written", () => {
  const before = reader.stamp(3_000);
  reader.all("select id from users", []);
  expect(sameStamp(reader.stamp(3_020), before)).toBe(true);
});
