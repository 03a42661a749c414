// Table types of the service database. Credits are stored in milli-credits (integers) because
// 4k renders cost 1.5 per second; the wire format shows plain numbers. Times are milliseconds
// since the epoch (the API shows Unix seconds). Kept to types both SQLite and Postgres hold.
import type { Generated } from "kysely";

export interface UsersTable {
  id: string;
  email: string;
  username: string;
  first_name: string | null;
  last_name: string | null;
  plan: string;
  credits_remaining_milli: number;
  credits_used_milli: number;
  webhook_secret: string;
  created_ms: number;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  key_hash: string;
  key_prefix: string;
  created_ms: number;
  revoked_ms: number | null;
}

export interface AssetsTable {
  id: string;
  user_id: string;
  filename: string;
  size_bytes: number;
  checksum_sha256: string;
  status: "pending_upload" | "ready";
  upload_key: string;
  storage_key: string | null;
  duplicate_of: string | null;
  created_ms: number;
  completed_ms: number | null;
}

export interface RendersTable {
  id: string;
  user_id: string;
  status: "queued" | "rendering" | "completed" | "failed";
  progress: number;
  title: string | null;
  fps: number;
  quality: string;
  format: string;
  resolution: string;
  aspect_ratio: string;
  composition: string;
  variables_json: string;
  strict_variables: number;
  /** JSON array of RenderWarning (migration 0003). */
  warnings_json: string;
  project_json: string;
  asset_id: string;
  duration: number | null;
  credits_charged_milli: number;
  created_ms: number;
  started_ms: number | null;
  completed_ms: number | null;
  video_key: string | null;
  thumbnail_key: string | null;
  failure_code: string | null;
  failure_message: string | null;
  callback_url: string | null;
  callback_id: string | null;
  deleted_ms: number | null;
  /** The id of the HTTP request that submitted the render, on its jobs' log lines (0005). */
  request_id: string | null;
  /**
   * 1 while the render waits for its account to be under the cap on renders in progress
   * (SVC_SERVER_MAX_RENDERS_PER_ACCOUNT): its jobs are queued only when it is admitted (0005).
   */
  held: number;
  /** Frames planned at submit (data-duration x fps), when known (migration 0004). */
  frames: number | null;
  /** 1 for a render that one worker renders whole. */
  chunk_count: number;
  chunks_done: number;
  /** JSON AudioInput[] with project-relative sources, from the chunk that starts the render. */
  audio_json: string | null;
  /**
   * Several outputs (0007): how many render_outputs rows the render has (0: a render submitted
   * without `outputs`, whose one output is this row) and how many of them are done.
   */
  output_count: number;
  outputs_done: number;
  /** JSON RenderCaptions (engine/types.ts) read from the project at submit, or null (0009). */
  captions_json?: string | null;
  /**
   * JSON RenderLibrary[] (shared/api.ts): the npm libraries that answered the page's CDN URLs,
   * each tag or range with the version it was pinned to, or null when none (0010).
   */
  libraries_json?: string | null;
}

/** One output of a render submitted with `outputs` (0007); its charge line once the render completes. */
export interface RenderOutputsTable {
  render_id: string;
  idx: number;
  kind: "video" | "still";
  format: string;
  resolution: string;
  aspect_ratio: string;
  width: number;
  height: number;
  /** A still's time in seconds; null for a video. */
  time_seconds: number | null;
  status: "queued" | "rendering" | "completed" | "failed";
  file_key: string | null;
  thumbnail_key: string | null;
  bytes: number | null;
  /** Set with the render's completion, in its transaction; 0 until then (and forever if it fails). */
  credits_charged_milli: number;
  duration: number | null;
  started_ms: number | null;
  completed_ms: number | null;
}

export interface RenderChunksTable {
  render_id: string;
  idx: number;
  first_segment: number;
  segment_count: number;
  first_frame: number;
  frame_count: number;
  state: "queued" | "rendering" | "done";
  frames_done: number;
  attempts: number;
  /** The worker that rendered it (the last attempt's). */
  worker: string | null;
  /** JSON string[]: object keys of its encoded segments, in order. */
  segments_json: string | null;
  started_ms: number | null;
  completed_ms: number | null;
  /** When a speculative second copy of this chunk was queued (render/speculation.ts), or null. */
  speculative_ms: number | null;
  /** 1 when that copy, not the first run, finished the chunk first (0008). */
  copy_won: Generated<number>;
}

export interface JobsTable {
  /** The render id, or `<render id>:chunk:<n>` / `:join` / `:output:<n>` (queue/job-queue.ts). */
  id: string;
  state: "queued" | "active" | "done" | "failed";
  attempts: number;
  lease_owner: string | null;
  lease_token: string | null;
  lease_expires_ms: number | null;
  created_ms: number;
  /** The pg-boss job carrying it, in the scale-out shape. */
  queue_ref: string | null;
}

export interface IdempotencyKeysTable {
  user_id: string;
  endpoint: string;
  key: string;
  request_hash: string;
  status_code: number | null;
  response_json: string | null;
  created_ms: number;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  render_id: string;
  user_id: string;
  url: string;
  event: string;
  state: "pending" | "delivered" | "failed";
  attempts: number;
  next_attempt_ms: number;
  last_error: string | null;
  created_ms: number;
  delivered_ms: number | null;
  /** render.output.completed: which output (0007); null for the render's own events. */
  output_idx: number | null;
}

export interface UserPasswordsTable {
  user_id: string;
  /** `scrypt$N$r$p$salt$hash` (passwords.ts). */
  password_hash: string;
  updated_ms: number;
}

/** A browser signed in to the sign-in pages (cookie `svc_session`, stored hashed). */
export interface WebSessionsTable {
  session_hash: string;
  user_id: string;
  created_ms: number;
  expires_ms: number;
}

export interface OAuthCodesTable {
  code_hash: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  /** PKCE S256 challenge: base64url(SHA-256(verifier)). */
  code_challenge: string;
  scope: string;
  created_ms: number;
  expires_ms: number;
  used_ms: number | null;
  /** The token family issued for this code, revoked if the code is presented again. */
  family_id: string | null;
}

export interface OAuthTokensTable {
  id: string;
  token_hash: string;
  kind: "access" | "refresh";
  /** Every token descended from one sign-in; a reused refresh token revokes them all. */
  family_id: string;
  user_id: string;
  client_id: string;
  scope: string;
  created_ms: number;
  expires_ms: number;
  /** Set when a refresh token was exchanged for a new pair; presenting it again is reuse. */
  rotated_ms: number | null;
  revoked_ms: number | null;
}

export interface OAuthDeviceCodesTable {
  id: string;
  device_code_hash: string;
  /** Normalised: 8 letters, no dash. */
  user_code: string;
  client_id: string;
  scope: string;
  status: "pending" | "approved" | "denied" | "used";
  user_id: string | null;
  interval_seconds: number;
  last_poll_ms: number | null;
  created_ms: number;
  expires_ms: number;
}

/**
 * Request counts of the rate limit (migration 0005), shared by every API process on one
 * database: one row per credential and window (fixed windows of a minute).
 */
export interface RateLimitsTable {
  key: string;
  hits: number;
  window_end_ms: number;
}

/** A render worker process and how many jobs it runs at once, last seen at seen_ms. */
export interface WorkerPresenceTable {
  owner: string;
  slots: number;
  seen_ms: number;
}

export interface DB {
  users: UsersTable;
  api_keys: ApiKeysTable;
  assets: AssetsTable;
  renders: RendersTable;
  render_chunks: RenderChunksTable;
  render_outputs: RenderOutputsTable;
  jobs: JobsTable;
  idempotency_keys: IdempotencyKeysTable;
  webhook_deliveries: WebhookDeliveriesTable;
  user_passwords: UserPasswordsTable;
  web_sessions: WebSessionsTable;
  oauth_codes: OAuthCodesTable;
  oauth_tokens: OAuthTokensTable;
  oauth_device_codes: OAuthDeviceCodesTable;
  rate_limits: RateLimitsTable;
  worker_presence: WorkerPresenceTable;
}
