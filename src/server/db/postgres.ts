// The scale-out database: PostgreSQL through Kysely's Postgres dialect and a `pg` pool, chosen by
// SVC_DATABASE_URL=postgres://... Same tables, same migrations, same queries as SQLite. int8
// columns (the *_ms times and milli-credits) are read as numbers, as SQLite gives them: every
// value stored there stays far below 2^53.
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { migrate, type Database } from "./database";
import type { DB } from "./schema";

const INT8_OID = 20;

export async function openPostgresDatabase(
  url: string,
  options: { poolSize?: number } = {},
): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    application_name: "svc",
    types: {
      getTypeParser: (oid: number, format?: "text" | "binary") =>
        oid === INT8_OID
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format as "text"),
    },
  });
  // An idle client that loses its connection (database restart) must not crash the process.
  pool.on("error", () => undefined);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migrate(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return db;
}
