// The embedded database: SQLite in the data dir, in WAL mode so a crash loses no committed
// transaction.
import { closeSync, openSync } from "node:fs";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { migrate, type Database } from "./database";
import type { DB } from "./schema";

export async function openSqliteDatabase(file: string): Promise<Database> {
  // Create the file owner-only before SQLite does (its WAL and SHM files inherit the mode).
  closeSync(openSync(file, "a", 0o600));
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.pragma("foreign_keys = ON");
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrate(db);
  return db;
}
