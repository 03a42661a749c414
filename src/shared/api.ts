// The /v3 wire format of the render service (SPEC.md section 4), as zod schemas: request bodies,
// the asset / render / user records, list pages and error codes. The service validates with
// these, and the CLI and the desktop app parse responses with them, so a field is named once.
import { captionsRequestSchema } from "./captions";
import { z } from "zod";
import {
  ASPECT_RATIOS,
  FORMATS,
  QUALITIES,
  RESOLUTIONS,
  renderOptionsShape,
  renderSettingsRule,
} from "./render-options";
import { outputsRule, outputsShape, renderOutputSchema } from "./outputs";

/** Every error code the service returns, with its HTTP status. */
export const API_ERRORS = {
  invalid_parameter: 400,
  authentication_failed: 401,
  svc_insufficient_credits: 402,
  forbidden: 403,
  not_found: 404,
  range_not_satisfiable: 416,
  svc_asset_not_found: 404,
  svc_render_not_found: 404,
  svc_upload_not_found: 409,
  svc_idempotency_conflict: 409,
  /** Cancel of a render that already ended (completed, or failed for another reason). */
  svc_render_finished: 409,
  svc_project_too_large: 413,
  /** A JSON request body over the service's limit (1 MiB). */
  request_too_large: 413,
  svc_project_invalid: 422,
  svc_checksum_mismatch: 422,
  svc_size_mismatch: 422,
  svc_archive_corrupt: 422,
  svc_archive_unsafe_path: 422,
  svc_archive_symlink: 422,
  svc_archive_too_many_entries: 422,
  svc_archive_bomb: 422,
  svc_project_fetch_failed: 422,
  rate_limit_exceeded: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ApiErrorCode = keyof typeof API_ERRORS;

/** The failure_code of a render stopped by `POST /v3/svc/renders/{id}/cancel` (nothing charged). */
export const CANCELLED_FAILURE_CODE = "cancelled";

export interface ApiErrorBody {
  code: ApiErrorCode;
  message: string;
  param?: string;
}

export const apiErrorEnvelopeSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    param: z.string().optional(),
  }),
});

/** `{data: ...}` around any payload schema. */
export function dataEnvelope<T extends z.ZodType>(schema: T) {
  return z.object({ data: schema });
}

export const ASSET_ID_PREFIX = "asst_";
export const RENDER_ID_PREFIX = "rndr_";

// ---------------------------------------------------------------- assets

export const createAssetRequestSchema = z.object({
  filename: z.string().min(1).max(255),
  content_type: z.literal("application/zip", { error: 'content_type must be "application/zip"' }),
  size_bytes: z.number().int().positive({ error: "size_bytes must be a positive integer" }),
  /** Optional (null or absent): the service then computes the digest when the upload completes. */
  checksum_sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/i, { error: "checksum_sha256 must be 64 hex characters" })
    .nullish(),
});
export type CreateAssetRequest = z.infer<typeof createAssetRequestSchema>;

export const ASSET_STATUSES = ["pending_upload", "ready"] as const;

export const createAssetResponseSchema = z.object({
  asset_id: z.string(),
  upload_url: z.string(),
  upload_headers: z.record(z.string(), z.string()),
  expires_in_seconds: z.number().int(),
  max_bytes: z.number().int(),
  status: z.literal("pending_upload"),
});
export type CreateAssetResponse = z.infer<typeof createAssetResponseSchema>;

export const completeAssetResponseSchema = z.object({
  asset_id: z.string(),
  size_bytes: z.number().int(),
  status: z.literal("ready"),
  /** True when an identical upload of the same account already existed and `asset_id` names it. */
  deduplicated: z.boolean(),
  mime_type: z.literal("application/zip"),
  /** A short-lived signed GET of the stored zip. */
  url: z.string(),
});
export type CompleteAssetResponse = z.infer<typeof completeAssetResponseSchema>;

export const assetRecordSchema = z.object({
  asset_id: z.string(),
  filename: z.string(),
  content_type: z.literal("application/zip"),
  size_bytes: z.number().int(),
  checksum_sha256: z.string(),
  status: z.enum(ASSET_STATUSES),
  /** Set when this upload turned out identical to an earlier asset of the account. */
  duplicate_of: z.string().nullable(),
  created_at: z.number().int(),
  completed_at: z.number().int().nullable(),
});
export type AssetRecord = z.infer<typeof assetRecordSchema>;

/**
 * svc extension: what a composition inside an asset declares, so a client can show the variables
 * form for rendering the asset again. `variables_json` is the raw `data-composition-variables`
 * value; clients parse it with src/shared/variables.ts like a local project's.
 */
export const assetCompositionSchema = z.object({
  asset_id: z.string(),
  composition: z.string(),
  width: z.number().int(),
  height: z.number().int(),
  duration: z.number().nullable(),
  variables_json: z.string().nullable(),
});
export type AssetComposition = z.infer<typeof assetCompositionSchema>;

// ---------------------------------------------------------------- renders

export const projectSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("asset_id"), asset_id: z.string().min(1) }),
  z.object({ type: z.literal("url"), url: z.url({ error: "project.url must be a URL" }) }),
]);

export const variableValuesSchema = z.record(z.string(), z.unknown());

export const renderRequestSchema = z
  .object({
    project: projectSchema,
    ...renderOptionsShape,
    composition: z.string().min(1).max(1024).default("index.html"),
    variables: variableValuesSchema.default({}),
    strict_variables: z.boolean().default(false),
    title: z.string().max(500).nullable().optional(),
    callback_url: z.url({ error: "callback_url must be a URL" }).nullable().optional(),
    callback_id: z.string().max(500).nullable().optional(),
    /** Several files from one render (shared/outputs.ts); absent: one, the top-level settings. */
    ...outputsShape,
    /** Captions from a file in the project (shared/captions.ts), checked before queueing. */
    captions: captionsRequestSchema.optional(),
  })
  .superRefine(renderSettingsRule)
  .superRefine(outputsRule);
export type RenderRequest = z.input<typeof renderRequestSchema>;
export type ParsedRenderRequest = z.output<typeof renderRequestSchema>;

export const RENDER_STATUSES = ["queued", "rendering", "completed", "failed"] as const;
export type RenderStatus = (typeof RENDER_STATUSES)[number];
export const TERMINAL_RENDER_STATUSES: readonly RenderStatus[] = ["completed", "failed"];

export const submitRenderResponseSchema = z.object({
  render_id: z.string(),
  status: z.literal("queued"),
});
export type SubmitRenderResponse = z.infer<typeof submitRenderResponseSchema>;

/**
 * Something the service accepted but the client should know: an undeclared variable (SPEC.md
 * section 4: a warning on the record unless `strict_variables`, then it is a 422), or something
 * the rendered page did that may make the picture differ from what its author meant (the engine's
 * findings, as `svc check` prints them: a file or request that failed, a font that fell back, no
 * timeline, randomness at render time), added when the render is done.
 */
export const RENDER_WARNING_CODES = ["undeclared_variable", "composition"] as const;
export const renderWarningSchema = z.object({
  code: z.enum(RENDER_WARNING_CODES),
  message: z.string(),
  /** The request field it is about, e.g. `variables.subtitle`. */
  param: z.string(),
});
export type RenderWarning = z.infer<typeof renderWarningSchema>;

/**
 * An npm library that answered a CDN URL of the rendered page (jsdelivr, unpkg, cdnjs, esm.sh,
 * Skypack): the tag or range the URL named, the version it was pinned to in svc's library cache,
 * the tarball's integrity and the file used, so the render can be repeated with the same bytes.
 */
export const renderLibrarySchema = z.object({
  package: z.string(),
  /** As the URL wrote it (`3`, `^1.2`); "latest" when it named none. */
  requested: z.string(),
  version: z.string(),
  /** The npm registry's integrity string of the package's tarball (`sha512-...`). */
  integrity: z.string(),
  /** The file of the package that answered, e.g. `dist/anime.min.js`. */
  path: z.string(),
});
export type RenderLibrary = z.infer<typeof renderLibrarySchema>;

export const renderRecordSchema = z.object({
  render_id: z.string(),
  status: z.enum(RENDER_STATUSES),
  progress: z.number().min(0).max(1),
  title: z.string().nullable(),
  fps: z.number().int(),
  quality: z.enum(QUALITIES),
  format: z.enum(FORMATS),
  resolution: z.enum(RESOLUTIONS),
  aspect_ratio: z.enum(ASPECT_RATIOS),
  composition: z.string(),
  duration: z.number().nullable(),
  credits_charged: z.number(),
  created_at: z.number().int(),
  started_at: z.number().int().nullable(),
  completed_at: z.number().int().nullable(),
  video_url: z.string().nullable(),
  thumbnail_url: z.string().nullable(),
  failure_code: z.string().nullable(),
  failure_message: z.string().nullable(),
  callback_id: z.string().nullable(),
  /** Absent from services older than the field: parsed as none. */
  warnings: z.array(renderWarningSchema).default([]),
  // svc extensions (not in the hosted API): what the render was made from, so a client can
  // render the same asset again with new values.
  asset_id: z.string(),
  variables: z.record(z.string(), z.unknown()),
  strict_variables: z.boolean(),
  /**
   * The render's files, in the request's order (one for a render without `outputs`, describing
   * the fields above). Absent from services older than the field: parsed as none.
   */
  outputs: z.array(renderOutputSchema).default([]),
  /**
   * The npm libraries that answered the page's CDN URLs (svc extension), added when the render is
   * done. Absent from services older than the field: parsed as none.
   */
  libraries: z.array(renderLibrarySchema).default([]),
});
export type RenderRecord = z.infer<typeof renderRecordSchema>;

export const LIST_LIMIT_MAX = 100;
export const LIST_LIMIT_DEFAULT = 10;

export const listRendersQuerySchema = z.object({
  limit: z.coerce
    .number({ error: `limit must be a whole number from 1 to ${LIST_LIMIT_MAX}` })
    .int({ error: `limit must be a whole number from 1 to ${LIST_LIMIT_MAX}` })
    .min(1, { error: `limit must be at least 1` })
    .max(LIST_LIMIT_MAX, { error: `limit must be at most ${LIST_LIMIT_MAX}` })
    .default(LIST_LIMIT_DEFAULT),
  token: z.string().min(1).optional(),
});

export const renderListSchema = z.object({
  data: z.array(renderRecordSchema),
  has_more: z.boolean(),
  next_token: z.string().nullable(),
});
export type RenderList = z.infer<typeof renderListSchema>;

export const deleteRenderResponseSchema = z.object({ render_id: z.string() });

// ---------------------------------------------------------------- users

export const userRecordSchema = z.object({
  username: z.string(),
  email: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  billing: z.object({
    plan: z.string(),
    credits_remaining: z.number(),
    credits_used: z.number(),
  }),
});
export type UserRecord = z.infer<typeof userRecordSchema>;

// ---------------------------------------------------------------- webhooks

export const WEBHOOK_SIGNATURE_HEADER = "Svc-Signature";

export const WEBHOOK_EVENTS = [
  "render.completed",
  "render.failed",
  /** One output of a render submitted with `outputs` is done (sent as each completes). */
  "render.output.completed",
] as const;

export const webhookPayloadSchema = z.object({
  event: z.enum(WEBHOOK_EVENTS),
  render_id: z.string(),
  status: z.enum(["completed", "failed"]),
  callback_id: z.string().nullable(),
  video_url: z.string().nullable(),
  thumbnail_url: z.string().nullable(),
  duration: z.number().nullable(),
  /** Why it failed (`cancelled` when cancelled); absent from services before the cancel endpoint. */
  failure_code: z.string().nullable().optional(),
  failure_message: z.string().nullable(),
  created_at: z.number().int(),
  /** The render's outputs as in its record (absent from services before several outputs). */
  outputs: z.array(renderOutputSchema).optional(),
  /** render.output.completed: the output that completed. */
  output: renderOutputSchema.optional(),
});
export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;
