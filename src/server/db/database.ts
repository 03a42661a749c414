// The `Database` seam: a Kysely instance over the service's tables, and the one list of
// migrations that both implementations run. The embedded default is SQLite in the data dir
// (sqlite.ts); the scale-out shape is PostgreSQL. Queries stick to portable Kysely.
import type { Kysely } from "kysely";
import { Migrator, CompiledQuery, type Compilable } from "kysely";
import { migrationProvider } from "./migrations";
import type { DB } from "./schema";

export type Database = Kysely<DB>;

export async function migrate(db: Database): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
}

/**
 * A query whose SQL is built once per database and then run with new parameters. Kysely builds,
 * freezes and compiles a query's tree on every call (about a tenth of a poll's CPU, bench/README.md
 * "API"), which the hottest read, a client polling its render, need not pay. `build` is called
 * once with stand-in strings for its parameters, and must use each exactly once, as a value
 * (checked on first use).
 */
export function compiledOnce<Row, Args extends string[]>(
  build: (db: Database, ...parameters: Args) => Compilable<Row>,
): CompiledOnce<Row, Args> {
  const compiled = new WeakMap<Database, string>();
  const standIns = Array.from({ length: build.length - 1 }, (_, i) => `\u0000parameter ${i}`);
  const textFor = (db: Database) => {
    let text = compiled.get(db);
    if (text === undefined) {
      const query = build(db, ...(standIns as Args)).compile();
      const inOrder =
        query.parameters.length === standIns.length &&
        query.parameters.every((value, index) => value === standIns[index]);
      if (!inOrder) throw new Error("compiledOnce: each parameter must be used once, in order");
      text = query.sql;
      compiled.set(db, text);
    }
    return text;
  };
  const run = async (db: Database, ...args: Args) => {
    const result = await db.executeQuery<Row>(CompiledQuery.raw(textFor(db), args));
    return result.rows;
  };
  return Object.assign(run, { sql: textFor });
}

export interface CompiledOnce<Row, Args extends string[]> {
  (db: Database, ...args: Args): Promise<Row[]>;
  /** The SQL text for `db`'s dialect, to run on another connection (sqlite.ts SqliteReader). */
  sql(db: Database): string;
}
