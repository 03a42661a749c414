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
  // A second connection that only reads (see SqliteReader).
  const reader = new SqliteReader(file);
  const database = withStatementCache(sqlite);
  const db = new Kysely<DB>({
    dialect: new SqliteDialect({
      database: {
        prepare: (sql) => {
          // Kysely runs the statement in the same turn: no poll reads between this and it.
          reader.noteStatement();
          return database.prepare(sql);
        },
        close: () => {
          reader.close();
          database.close();
        },
      },
    }),
  });
  readers.set(db, reader);
  await migrate(db);
  return db;
}

const readers = new WeakMap<Database, SqliteReader>();

/** The reading connection of a database openSqliteDatabase opened; undefined for PostgreSQL. */
export function sqliteReaderOf(db: Database): SqliteReader | undefined {
  return readers.get(db);
}

/**
 * A connection of its own that only reads, synchronously, for the polled answer (issue 40). In WAL
 * mode its reads never wait for the service's connection (a read does not queue behind another
 * request's transaction) and see only committed data.
 *
 * `stamp` tells whether anything may have changed since an earlier stamp, without a syscall on
 * the common path: `local` counts the statements the service's own connection has run (each
 * commit among them, counted in the turn it runs), so this process's writes are seen at once;
 * other processes' commits (on SQLite: `svc server users ...` and the like) show in SQLite's
 * `data_version`, which costs a read lock (two fcntl calls, ~14 µs of a quiet poll) and is read
 * at most every VERSION_CHECK_MS.
 */
export class SqliteReader {
  private readonly sqlite: BetterSqlite3.Database;
  private readonly statements: SqliteDatabase;
  private readonly version: BetterSqlite3.Statement;
  private local = 0;
  private dataVersion = 0;
  private checkedAt = Number.NEGATIVE_INFINITY;

  constructor(file: string) {
    this.sqlite = new BetterSqlite3(file);
    this.sqlite.pragma("busy_timeout = 5000");
    this.sqlite.pragma("query_only = ON");
    this.statements = withStatementCache(this.sqlite);
    this.version = this.sqlite.prepare("pragma data_version").pluck();
  }

  /** The service's own connection is about to run a statement. */
  noteStatement(): void {
    this.local++;
  }

  /** Equal stamps: nothing was committed between them (other processes: up to 10 ms late). */
  stamp(now = performance.now()): ReaderStamp {
    if (now - this.checkedAt >= VERSION_CHECK_MS) {
      this.dataVersion = this.version.get() as number;
      this.checkedAt = now;
    }
    return { local: this.local, dataVersion: this.dataVersion };
  }

  all<Row>(sql: string, parameters: readonly unknown[]): Row[] {
    return this.statements.prepare(sql).all(parameters) as Row[];
  }

  close(): void {
    this.sqlite.close();
  }
}

const VERSION_CHECK_MS = 10;

export interface ReaderStamp {
  local: number;
  dataVersion: number;
}

export function sameStamp(a: ReaderStamp, b: ReaderStamp): boolean {
  return a.local === b.local && a.dataVersion === b.dataVersion;
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
