// The `Database` seam: a Kysely instance over the DB tables. The embedded default is SQLite in
// the data dir (WAL, so a crash loses no committed transaction); a Postgres dialect can be
// dropped in here without touching the queries, which stick to portable Kysely.
import { closeSync, openSync } from "node:fs";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, Migrator, SqliteDialect } from "kysely";
import { migrationProvider } from "./migrations";
import type { DB } from "./schema";

export type Database = Kysely<DB>;

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

export async function migrate(db: Database): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
