// Schema migrations, in code so they ship with the service. Written with Kysely's schema
// builder and portable column types, so the one list runs on SQLite and on PostgreSQL; the two
// places where the dialects differ (an auto-increment key, an 8-byte float) ask `types(db)`.
import { PostgresAdapter, type Kysely, type Migration, type MigrationProvider } from "kysely";

/** Column types whose spelling differs between SQLite and PostgreSQL. */
function types(db: Kysely<unknown>) {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  return {
    /** 8-byte float: SQLite's real is one, PostgreSQL's is 4 bytes. */
    double: postgres ? ("double precision" as const) : ("real" as const),
    postgres,
  };
}

const initial: Migration = {
  async up(db: Kysely<unknown>) {
    const { double, postgres } = types(db);
    await db.schema
      .createTable("users")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("email", "text", (c) => c.notNull().unique())
      .addColumn("username", "text", (c) => c.notNull())
      .addColumn("first_name", "text")
      .addColumn("last_name", "text")
      .addColumn("plan", "text", (c) => c.notNull())
      .addColumn("credits_remaining_milli", "bigint", (c) => c.notNull())
      .addColumn("credits_used_milli", "bigint", (c) => c.notNull())
      .addColumn("webhook_secret", "text", (c) => c.notNull())
      .addColumn("created_ms", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("api_keys")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
      .addColumn("key_hash", "text", (c) => c.notNull().unique())
      .addColumn("key_prefix", "text", (c) => c.notNull())
      .addColumn("created_ms", "bigint", (c) => c.notNull())
      .addColumn("revoked_ms", "bigint")
      .execute();
    await db.schema
      .createTable("assets")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
      .addColumn("filename", "text", (c) => c.notNull())
      .addColumn("size_bytes", "bigint", (c) => c.notNull())
      .addColumn("checksum_sha256", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("upload_key", "text", (c) => c.notNull())
      .addColumn("storage_key", "text")
      .addColumn("duplicate_of", "text")
      .addColumn("created_ms", "bigint", (c) => c.notNull())
      .addColumn("completed_ms", "bigint")
      .execute();
    await db.schema
      .createIndex("assets_by_checksum")
      .on("assets")
      .columns(["user_id", "checksum_sha256"])
      .execute();
    await db.schema
      .createTable("renders")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("progress", double, (c) => c.notNull())
      .addColumn("title", "text")
      .addColumn("fps", "integer", (c) => c.notNull())
      .addColumn("quality", "text", (c) => c.notNull())
      .addColumn("format", "text", (c) => c.notNull())
      .addColumn("resolution", "text", (c) => c.notNull())
      .addColumn("aspect_ratio", "text", (c) => c.notNull())
      .addColumn("composition", "text", (c) => c.notNull())
      .addColumn("variables_json", "text", (c) => c.notNull())
      .addColumn("strict_variables", "integer", (c) => c.notNull())
      .addColumn("project_json", "text", (c) => c.notNull())
      .addColumn("asset_id", "text", (c) => c.notNull())
      .addColumn("duration", double)
      .addColumn("credits_charged_milli", "bigint", (c) => c.notNull())
      .addColumn("created_ms", "bigint", (c) => c.notNull())
      .addColumn("started_ms", "bigint")
      .addColumn("completed_ms", "bigint")
      .addColumn("video_key", "text")
      .addColumn("thumbnail_key", "text")
      .addColumn("failure_code", "text")
      .addColumn("failure_message", "text")
      .addColumn("callback_url", "text")
      .addColumn("callback_id", "text")
      .addColumn("deleted_ms", "bigint")
      .execute();
    await db.schema
      .createIndex("renders_by_user_newest")
      .on("renders")
      .columns(["user_id", "created_ms", "id"])
      .execute();
    await db.schema
      .createTable("jobs")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("lease_owner", "text")
      .addColumn("lease_token", "text")
      .addColumn("lease_expires_ms", "bigint")
      .addColumn("created_ms", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("jobs_by_state")
      .on("jobs")
      .columns(["state", "created_ms"])
      .execute();
    await db.schema
      .createTable("idempotency_keys")
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("endpoint", "text", (c) => c.notNull())
      .addColumn("key", "text", (c) => c.notNull())
      .addColumn("request_hash", "text", (c) => c.notNull())
      .addColumn("status_code", "integer")
      .addColumn("response_json", "text")
      .addColumn("created_ms", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("idempotency_keys_pk", ["user_id", "endpoint", "key"])
      .execute();
    await db.schema
      .createTable("webhook_deliveries")
      .addColumn("id", postgres ? "serial" : "integer", (c) =>
        postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
      )
      .addColumn("render_id", "text", (c) => c.notNull())
      .addColumn("user_id", "text", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("event", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("next_attempt_ms", "bigint", (c) => c.notNull())
      .addColumn("last_error", "text")
      .addColumn("created_ms", "bigint", (c) => c.notNull())
      .addColumn("delivered_ms", "bigint")
      .execute();
    await db.schema
      .createIndex("webhook_deliveries_due")
      .on("webhook_deliveries")
      .columns(["state", "next_attempt_ms"])
      .execute();
  },
};

/**
 * Sign-in (issue 6): passwords, browser sessions of the sign-in pages, and the OAuth
 * authorization server's codes, tokens and device codes. Every secret is stored as a SHA-256
 * hash; only the password uses a slow hash (scrypt), because it is the one a person chose.
 */
const oauth: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("user_passwords")
      .addColumn("user_id", "text", (c) => c.primaryKey().references("users.id"))
      .addColumn("password_hash", "text", (c) => c.notNull())
      .addColumn("updated_ms", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("web_sessions")
      .addColumn("session_hash", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
      .addColumn("created_ms", "bigint", (c) => c.notNull())
      .addColumn("expires_ms", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("oauth_codes")
      .addColumn("code_hash", "text", (c) => c.primaryKey())
      .addColumn("client_id", "text", (c) => c.notNull())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
      .addColumn("redirect_uri", "text", (c) => c.notNull())
      .addColumn("code_challenge", "text", (c) => c.notNull())
      .addColumn("scope", "text", (c) => c.notNull())
      .addColumn("created_ms", "bigint", (c) => c.notNull())
      .addColumn("expires_ms", "bigint", (c) => c.notNull())
      .addColumn("used_ms", "bigint")
      .addColumn("family_id", "text")
      .execute();
    await db.schema
      .createTable("oauth_tokens")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("token_hash", "text", (c) => c.notNull().unique())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("family_id", "text", (c) => c.notNull())
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
      .addColumn("client_id", "text", (c) => c.notNull())
      .addColumn("scope", "text", (c) => c.notNull())
      .addColumn("created_ms", "bigint", (c) => c.notNull())
      .addColumn("expires_ms", "bigint", (c) => c.notNull())
      .addColumn("rotated_ms", "bigint")
      .addColumn("revoked_ms", "bigint")
      .execute();
    await db.schema
      .createIndex("oauth_tokens_by_family")
      .on("oauth_tokens")
      .column("family_id")
      .execute();
    await db.schema
      .createTable("oauth_device_codes")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("device_code_hash", "text", (c) => c.notNull().unique())
      .addColumn("user_code", "text", (c) => c.notNull())
      .addColumn("client_id", "text", (c) => c.notNull())
      .addColumn("scope", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("user_id", "text", (c) => c.references("users.id"))
      .addColumn("interval_seconds", "integer", (c) => c.notNull())
      .addColumn("last_poll_ms", "bigint")
      .addColumn("created_ms", "bigint", (c) => c.notNull())
      .addColumn("expires_ms", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("oauth_device_codes_by_user_code")
      .on("oauth_device_codes")
      .column("user_code")
      .execute();
  },
};

/** Warnings on the render record (undeclared variables when not strict, SPEC.md section 4). */
const renderWarnings: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable("renders")
      .addColumn("warnings_json", "text", (c) => c.notNull().defaultTo("[]"))
      .execute();
  },
};

/**
 * Distributed rendering (issue 17): a render may be cut into chunks that any worker renders, then
 * joined. The render knows its frame count and how many chunks are done (one atomic counter, so
 * exactly one chunk's completion queues the join); each chunk records where its segments are and
 * which worker made them. `jobs.queue_ref` is the pg-boss job behind a job in the scale-out shape.
 */
const chunks: Migration = {
  async up(db: Kysely<unknown>) {
    const alter = (column: string, type: "integer" | "text", notNull?: number) =>
      db.schema
        .alterTable("renders")
        .addColumn(column, type, (c) =>
          notNull === undefined ? c : c.notNull().defaultTo(notNull),
        )
        .execute();
    await alter("frames", "integer");
    await alter("chunk_count", "integer", 1);
    await alter("chunks_done", "integer", 0);
    await alter("audio_json", "text");
    await db.schema.alterTable("jobs").addColumn("queue_ref", "text").execute();
    await db.schema
      .createTable("render_chunks")
      .addColumn("render_id", "text", (c) => c.notNull())
      .addColumn("idx", "integer", (c) => c.notNull())
      .addColumn("first_segment", "integer", (c) => c.notNull())
      .addColumn("segment_count", "integer", (c) => c.notNull())
      .addColumn("first_frame", "integer", (c) => c.notNull())
      .addColumn("frame_count", "integer", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("frames_done", "integer", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("worker", "text")
      .addColumn("segments_json", "text")
      .addColumn("started_ms", "bigint")
      .addColumn("completed_ms", "bigint")
      .addPrimaryKeyConstraint("render_chunks_pk", ["render_id", "idx"])
      .execute();
  },
};

/**
 * Operations (issue 26): the submitting request's id on the render (logged with every job, chunk
 * and webhook delivery of it); renders held back by the per-account cap; an index for the metrics' and the per-account cap's counts of
 * renders by status; the rate limit's shared counters, so every API process on one database
 * counts the same requests.
 */
const operations: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("renders").addColumn("request_id", "text").execute();
    await db.schema
      .alterTable("renders")
      .addColumn("held", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex("renders_by_status")
      .on("renders")
      .columns(["status", "created_ms"])
      .execute();
    await db.schema
      .createTable("rate_limits")
      .addColumn("key", "text", (c) => c.primaryKey())
      .addColumn("hits", "integer", (c) => c.notNull())
      .addColumn("window_end_ms", "bigint", (c) => c.notNull())
      .execute();
  },
};

/**
 * Render workers announce themselves (issue 24): each worker process upserts its row every few
 * seconds, so the API can cut a render into about two chunks per live worker.
 */
const workerPresence: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("worker_presence")
      .addColumn("owner", "text", (c) => c.primaryKey())
      .addColumn("slots", "integer", (c) => c.notNull())
      .addColumn("seen_ms", "bigint", (c) => c.notNull())
      .execute();
  },
};

/**
 * Several outputs per render (issue 25): a render submitted with `outputs` has one row per output
 * (its file, thumbnail, bytes and charge line) and counts the ones done, so exactly one output's
 * completion completes the render; a webhook delivery may be about one output.
 */
const renderOutputs: Migration = {
  async up(db: Kysely<unknown>) {
    const { double } = types(db);
    for (const column of ["output_count", "outputs_done"]) {
      await db.schema
        .alterTable("renders")
        .addColumn(column, "integer", (c) => c.notNull().defaultTo(0))
        .execute();
    }
    await db.schema.alterTable("webhook_deliveries").addColumn("output_idx", "integer").execute();
    await db.schema
      .createTable("render_outputs")
      .addColumn("render_id", "text", (c) => c.notNull())
      .addColumn("idx", "integer", (c) => c.notNull())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("format", "text", (c) => c.notNull())
      .addColumn("resolution", "text", (c) => c.notNull())
      .addColumn("aspect_ratio", "text", (c) => c.notNull())
      .addColumn("width", "integer", (c) => c.notNull())
      .addColumn("height", "integer", (c) => c.notNull())
      .addColumn("time_seconds", double)
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("file_key", "text")
      .addColumn("thumbnail_key", "text")
      .addColumn("bytes", "bigint")
      .addColumn("credits_charged_milli", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("duration", double)
      .addColumn("started_ms", "bigint")
      .addColumn("completed_ms", "bigint")
      .addPrimaryKeyConstraint("render_outputs_pk", ["render_id", "idx"])
      .execute();
  },
};

/**
 * Speculative straggler chunks (issue 24): when a chunk's second copy was started elsewhere (at
 * most one per chunk: the update that sets it is the guard) and whether the copy finished first (0008).
 */
const speculativeChunks: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("render_chunks").addColumn("speculative_ms", "bigint").execute();
    await db.schema
      .alterTable("render_chunks")
      .addColumn("copy_won", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
  },
};

/** Captions of a render (issue 37): the cues read from the project's caption file at submit (0009). */
const renderCaptions: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("renders").addColumn("captions_json", "text").execute();
  },
};

/**
 * The CDN libraries a render used (issue 42): which npm version answered each tag or range the
 * page named, as local render results list them, so a render can be repeated with the same files
 * (0010).
 */
const renderLibraries: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("renders").addColumn("libraries_json", "text").execute();
  },
};

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return {
      "0001_initial": initial,
      "0002_oauth": oauth,
      "0003_render_warnings": renderWarnings,
      "0004_chunks": chunks,
      "0005_operations": operations,
      "0006_worker_presence": workerPresence,
      "0007_render_outputs": renderOutputs,
      "0008_speculative_chunks": speculativeChunks,
      "0009_render_captions": renderCaptions,
      "0010_render_libraries": renderLibraries,
    };
  },
};
