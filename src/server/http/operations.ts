// The /v3 operations: for each, its method and path, the zod schemas of what it accepts (body,
// query) and answers (the success envelope), and the error codes it can give. One table, read by
// the routes (`routeOf()`: fastify validates requests and serialises answers with these schemas,
// schema-compilers.ts) and by the OpenAPI document (openapi.ts), so the two cannot drift; a /v3
// route registered without an entry here is refused at start (app.ts).
import { z } from "zod";
import {
  assetCompositionSchema,
  assetRecordSchema,
  completeAssetResponseSchema,
  createAssetRequestSchema,
  createAssetResponseSchema,
  dataEnvelope,
  deleteRenderResponseSchema,
  listRendersQuerySchema,
  renderListSchema,
  renderRecordSchema,
  renderRequestSchema,
  submitRenderResponseSchema,
  userRecordSchema,
  type ApiErrorCode,
} from "../../shared/api";
import { renderQuoteRequestSchema, renderQuoteSchema } from "../../shared/quote";
import { precompiledAnswer } from "./schema-compilers";

export interface Operation {
  method: "GET" | "POST" | "DELETE";
  /** OpenAPI style: `{id}` for the path parameter. */
  path: string;
  summary: string;
  /** A JSON body; absent: the request has no body (one sent anyway is ignored). */
  body?: z.ZodType;
  query?: z.ZodObject;
  /** The success status and the schema of the whole answer. */
  success: { status: number; schema: z.ZodType };
  errors: readonly ApiErrorCode[];
  idempotent?: boolean;
}

/** Answers every authenticated /v3 operation can give, whatever it does. */
export const COMMON_ERRORS: readonly ApiErrorCode[] = [
  "authentication_failed",
  "rate_limit_exceeded",
  "internal_error",
  "service_unavailable",
];

const ARCHIVE_ERRORS = [
  "svc_checksum_mismatch",
  "svc_size_mismatch",
  "svc_archive_corrupt",
  "svc_archive_unsafe_path",
  "svc_archive_symlink",
  "svc_archive_too_many_entries",
  "svc_archive_bomb",
] as const satisfies readonly ApiErrorCode[];

const createAsset = <P extends string>(path: P) =>
  ({
    method: "POST",
    path,
    summary: "Create an asset for a project zip; the answer says where to PUT its bytes.",
    body: createAssetRequestSchema,
    success: { status: 201, schema: dataEnvelope(createAssetResponseSchema) },
    errors: [
      "invalid_parameter",
      "request_too_large",
      "svc_project_too_large",
      "svc_idempotency_conflict",
    ],
    idempotent: true,
  }) as const;

export const OPERATIONS = {
  createAsset: createAsset("/v3/assets"),
  createDirectUpload: createAsset("/v3/assets/direct-uploads"),
  completeAsset: {
    method: "POST",
    path: "/v3/assets/{id}/complete",
    summary: "Check the uploaded bytes (size, SHA-256, archive safety) and make the asset ready.",
    success: { status: 200, schema: dataEnvelope(completeAssetResponseSchema) },
    errors: ["svc_asset_not_found", "svc_upload_not_found", ...ARCHIVE_ERRORS],
  },
  getAsset: {
    method: "GET",
    path: "/v3/assets/{id}",
    summary: "An asset record.",
    success: { status: 200, schema: dataEnvelope(assetRecordSchema) },
    errors: ["svc_asset_not_found"],
  },
  getAssetComposition: {
    method: "GET",
    path: "/v3/svc/assets/{id}/composition",
    summary: "svc extension: the size, duration and variables a composition in the asset declares.",
    query: z.object({ composition: z.string().min(1).default("index.html") }),
    success: { status: 200, schema: dataEnvelope(assetCompositionSchema) },
    errors: [
      "invalid_parameter",
      "svc_asset_not_found",
      "svc_upload_not_found",
      "svc_project_invalid",
    ],
  },
  submitRender: {
    method: "POST",
    path: "/v3/svc/renders",
    summary: "Queue a render of an uploaded asset or of a project at a URL.",
    body: renderRequestSchema,
    success: { status: 201, schema: dataEnvelope(submitRenderResponseSchema) },
    errors: [
      "invalid_parameter",
      "request_too_large",
      "svc_asset_not_found",
      "svc_upload_not_found",
      "svc_project_invalid",
      "svc_project_too_large",
      "svc_project_fetch_failed",
      "svc_insufficient_credits",
      "svc_idempotency_conflict",
      ...ARCHIVE_ERRORS,
    ],
    idempotent: true,
  },
  quoteRender: {
    method: "POST",
    path: "/v3/svc/renders/quote",
    summary:
      "Frames, credits (the charge rule) and the estimated time of a render, before anything is uploaded or spent.",
    body: renderQuoteRequestSchema,
    success: { status: 200, schema: dataEnvelope(renderQuoteSchema) },
    errors: ["invalid_parameter"],
  },
  getRender: {
    method: "GET",
    path: "/v3/svc/renders/{id}",
    summary: "A render record, with fresh signed video and thumbnail URLs once completed.",
    // The operation every client polls: its answer is written by a generated serialiser.
    success: { status: 200, schema: precompiledAnswer(dataEnvelope(renderRecordSchema)) },
    errors: ["svc_render_not_found"],
  },
  listRenders: {
    method: "GET",
    path: "/v3/svc/renders",
    summary: "Renders, newest first, a page at a time.",
    query: listRendersQuerySchema,
    success: { status: 200, schema: renderListSchema },
    errors: ["invalid_parameter"],
  },
  cancelRender: {
    method: "POST",
    path: "/v3/svc/renders/{id}/cancel",
    summary:
      "svc extension: stop a queued or rendering render; it ends failed with failure_code cancelled and nothing is charged. Cancelling it again answers the same record; a render that already ended answers 409.",
    success: { status: 200, schema: dataEnvelope(renderRecordSchema) },
    errors: ["svc_render_not_found", "svc_render_finished"],
  },
  deleteRender: {
    method: "DELETE",
    path: "/v3/svc/renders/{id}",
    summary: "Soft-delete a render; its files are purged and a later GET is 404.",
    success: { status: 200, schema: dataEnvelope(deleteRenderResponseSchema) },
    errors: ["svc_render_not_found"],
  },
  getMe: {
    method: "GET",
    path: "/v3/users/me",
    summary: "The signed-in account and its credits.",
    success: { status: 200, schema: dataEnvelope(userRecordSchema) },
    errors: [],
  },
} as const satisfies Record<string, Operation>;

export type OperationId = keyof typeof OPERATIONS;

/** The path parameter of every `{id}` route. */
export const idParamsSchema = z.object({ id: z.string() });

type Op<K extends OperationId> = (typeof OPERATIONS)[K];
type Schemas<O> = {
  body: O extends { body: infer B } ? B : undefined;
  querystring: O extends { query: infer Q } ? Q : undefined;
  params: O extends { path: `${string}{id}${string}` } ? typeof idParamsSchema : undefined;
  // Any status (stored refusals replay with theirs); only the success status has a schema.
  response: O extends { success: { schema: infer R } } ? Record<number, R> : never;
};

/** Marks a route's schema as coming from this table (app.ts refuses /v3 routes without it). */
export const OPERATION_ID = "x-operation-id";

/** Method, fastify URL and schemas of an operation, to spread into `app.route()`. */
export function routeOf<K extends OperationId>(operationId: K) {
  const operation: Operation = OPERATIONS[operationId];
  const schema: Record<string, unknown> = {
    [OPERATION_ID]: operationId,
    response: { [operation.success.status]: operation.success.schema },
  };
  if (operation.body) schema.body = operation.body;
  if (operation.query) schema.querystring = operation.query;
  if (operation.path.includes("{id}")) schema.params = idParamsSchema;
  return {
    method: operation.method,
    url: operation.path.replace(/\{(\w+)\}/g, ":$1"),
    schema: schema as Schemas<Op<K>>,
  };
}
