// The embedded database: SQLite in the data dir, in WAL mode so a crash loses no committed
// transaction.
import { closeSync, openSync } from "node:fs";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, SqliteDialect, type SqliteDatabase, type SqliteStatement } from "kysely";
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
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      let statement = statements.get(sql);
      if (!statement) {
        // Bounded: queries with a variable number of parameters make new texts.
        if (statements.size >= 1000) statements.clear();
        const prepared = sqlite.prepare(sql);
        statement = prepared.reader ? new RowsAsObjects(prepared) : prepared;
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

/**
 * A reading statement whose rows come from SQLite as arrays and become objects here, through a
 * function made once from the statement's column names. better-sqlite3 builds each row object
 * key by key (a render row has 40 columns): about half the time of a poll's query (issue 40,
 * bench/README.md). The rows are the same plain objects, duplicate names keep the last column.
 */
class RowsAsObjects implements SqliteStatement {
  readonly reader = true;
  private readonly raw: BetterSqlite3.Statement;
  private toObject: ((row: unknown[]) => Record<string, unknown>) | undefined;
  private width = -1;

  constructor(private readonly statement: BetterSqlite3.Statement) {
    this.raw = statement.raw(true);
  }

  all(parameters: ReadonlyArray<unknown>): unknown[] {
    const rows = this.raw.all(parameters) as unknown[][];
    if (rows.length === 0) return rows;
    // A schema change (a migration) can change what `select *` returns: made again then.
    if (this.toObject === undefined || rows[0]!.length !== this.width) {
      const names = this.raw.columns().map((column) => column.name);
      this.width = names.length;
      // The names are SQLite's column names, quoted as JSON strings, never values.
      this.toObject = new Function(
        "row",
        `return {${names.map((name, i) => `${JSON.stringify(name)}: row[${i}]`).join(", ")}};`,
      ) as (row: unknown[]) => Record<string, unknown>;
    }
    const toObject = this.toObject;
    return rows.map((row) => toObject(row));
  }

  run(parameters: ReadonlyArray<unknown>): {
    changes: number | bigint;
    lastInsertRowid: number | bigint;
  } {
    return this.statement.run(parameters);
  }

  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    const toObject = (row: unknown[]) => {
      const names = this.raw.columns().map((column) => column.name);
      return Object.fromEntries(names.map((name, i) => [name, row[i]]));
    };
    const rows = this.raw.iterate(parameters) as IterableIterator<unknown[]>;
    return (function* () {
      for (const row of rows) yield toObject(row);
    })();
  }
}
