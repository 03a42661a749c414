// The `Database` seam: a Kysely instance over the service's tables, and the one list of
// migrations that both implementations run. The embedded default is SQLite in the data dir
// (sqlite.ts); the scale-out shape is PostgreSQL. Queries stick to portable Kysely.
import type { Kysely } from "kysely";
import { Migrator } from "kysely";
import { migrationProvider } from "./migrations";
import type { DB } from "./schema";

export type Database = Kysely<DB>;

export async function migrate(db: Database): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
