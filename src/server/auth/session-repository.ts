// Every query of the web_sessions table: the signed-in sessions of the sign-in and consent pages
// (auth-pages.ts), stored by the hash of their cookie's token.
import type { Kysely } from "kysely";
import type { DB, WebSessionsTable } from "../db/schema";

type Db = Kysely<DB>;

/** A new session; sessions already expired at `now` are deleted on the way. */
export async function insertSession(db: Db, session: WebSessionsTable, now: number): Promise<void> {
  await db.deleteFrom("web_sessions").where("expires_ms", "<=", now).execute();
  await db.insertInto("web_sessions").values(session).execute();
}

/** A session's account and expiry, by the hash of the session's token. */
export function findSessionUser(db: Db, sessionHash: string) {
  return db
    .selectFrom("web_sessions")
    .innerJoin("users", "users.id", "web_sessions.user_id")
    .selectAll("users")
    .select("web_sessions.expires_ms")
    .where("web_sessions.session_hash", "=", sessionHash)
    .executeTakeFirst();
}
