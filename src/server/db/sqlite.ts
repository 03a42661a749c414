// The embedded database: SQLite in the data dir, in WAL mode so a crash loses no committed
// transaction.
import { closeSync, openSync } from "node:fs";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, SqliteDialect, type SqliteDatabase } from "kysely";
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
  const db = new Kysely<DB>({
    dialect: new SqliteDialect({ database: withStatementCache(sqlite) }),
  });
  await migrate(db);
  return db;
}

/**
 * Kysely prepares every query it runs, and SQLite compiles a statement on each prepare: a
 * tenth of the CPU of a `GET /v3/svc/renders/{id}` (bench/README.md). The service runs the same
 * few dozen SQL texts, so each is prepared once and reused (better-sqlite3 statements are
 * synchronous, so reuse is safe; nothing here streams rows with iterate()).
 */
function withStatementCache(sqlite: BetterSqlite3.Database): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      let statement = statements.get(sql);
      if (!statement) {
        // Bounded: queries with a variable number of parameters make new texts.
        if (statements.size >= 1000) statements.clear();
        statement = sqlite.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}
