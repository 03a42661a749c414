// The scale-out database: PostgreSQL through Kysely's Postgres dialect and a `pg` pool, chosen by
// SVC_DATABASE_URL=postgres://... Same tables, same migrations, same queries as SQLite. int8
// columns (the *_ms times and milli-credits) are read as numbers, as SQLite gives them: every
// value stored there stays far below 2^53. Processes starting together on an empty database (an
// api and its workers rolled out at once) change the schema one at a time: see withStartupLock.
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
    await withStartupLock(url, () => migrate(db));
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return db;
}

/** How long a starting process waits for another one's schema changes before it gives up. */
const STARTUP_LOCK_TIMEOUT = "120s";

/**
 * Runs `change` (migrations, pg-boss's schema and queues) while this process holds a PostgreSQL
 * advisory lock that every svc process takes for its schema changes. Kysely's and pg-boss's own
 * locks cover only part of their work: pg-boss's queue creation is unlocked DDL (a partition
 * attached to pgboss.job, foreign keys to pgboss.queue), and an api and three workers starting
 * together on an empty database deadlocked there. The lock lives on a connection of its own and
 * goes with it, so a process that dies holding it releases it; one that waits longer than
 * STARTUP_LOCK_TIMEOUT fails its start (and the orchestrator starts it again).
 */
export async function withStartupLock<T>(url: string, change: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: "svc-startup" });
  client.on("error", () => undefined);
  await client.connect();
  try {
    await client.query(`set lock_timeout = '${STARTUP_LOCK_TIMEOUT}'`);
    await client.query("select pg_advisory_lock(hashtextextended('svc.schema', 0))");
    return await change();
  } finally {
    // Ending the session releases the lock.
    await client.end().catch(() => undefined);
  }
}
