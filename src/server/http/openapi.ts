// The /v3 API described as an OpenAPI 3.1 document, generated from the zod schemas the routes
// parse with (src/shared/api.ts), so the description cannot drift from what the service accepts
// and answers. Served at GET /v3/openapi.json and checked in as docs/openapi.json (a test fails
// when they differ; `npm run openapi` rewrites it). Every code of API_ERRORS appears with its
// status: in the operations that can answer it and in the `ApiError` component.
import { z } from "zod";
import {
  API_ERRORS,
  apiErrorEnvelopeSchema,
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
import { LOCAL_SERVICE_PORT } from "../../shared/limits";

interface Operation {
  method: "get" | "post" | "delete";
  path: string;
  operationId: string;
  summary: string;
  /** A JSON body (validated with this schema); absent: the request has no body. */
  body?: z.ZodType;
  query?: z.ZodObject;
  /** The success status and the schema of its `data`. */
  success: { status: number; data?: z.ZodType; raw?: z.ZodType };
  errors: ApiErrorCode[];
  idempotent?: boolean;
}

/** Answers every authenticated /v3 operation can give, whatever it does. */
const COMMON_ERRORS: ApiErrorCode[] = [
  "authentication_failed",
  "rate_limit_exceeded",
  "internal_error",
  "service_unavailable",
];

const ARCHIVE_ERRORS: ApiErrorCode[] = [
  "svc_checksum_mismatch",
  "svc_size_mismatch",
  "svc_archive_corrupt",
  "svc_archive_unsafe_path",
  "svc_archive_symlink",
  "svc_archive_too_many_entries",
  "svc_archive_bomb",
];

const createAsset = (path: string, operationId: string): Operation => ({
  method: "post",
  path,
  operationId,
  summary: "Create an asset for a project zip; the answer says where to PUT its bytes.",
  body: createAssetRequestSchema,
  success: { status: 201, data: createAssetResponseSchema },
  errors: ["invalid_parameter", "svc_project_too_large", "svc_idempotency_conflict"],
  idempotent: true,
});

const OPERATIONS: Operation[] = [
  createAsset("/v3/assets", "createAsset"),
  createAsset("/v3/assets/direct-uploads", "createDirectUpload"),
  {
    method: "post",
    path: "/v3/assets/{id}/complete",
    operationId: "completeAsset",
    summary: "Check the uploaded bytes (size, SHA-256, archive safety) and make the asset ready.",
    success: { status: 200, data: completeAssetResponseSchema },
    errors: ["svc_asset_not_found", "svc_upload_not_found", ...ARCHIVE_ERRORS],
  },
  {
    method: "get",
    path: "/v3/assets/{id}",
    operationId: "getAsset",
    summary: "An asset record.",
    success: { status: 200, data: assetRecordSchema },
    errors: ["svc_asset_not_found"],
  },
  {
    method: "get",
    path: "/v3/svc/assets/{id}/composition",
    operationId: "getAssetComposition",
    summary: "svc extension: the size, duration and variables a composition in the asset declares.",
    query: z.object({ composition: z.string().optional() }),
    success: { status: 200, data: assetCompositionSchema },
    errors: ["svc_asset_not_found", "svc_upload_not_found", "svc_project_invalid"],
  },
  {
    method: "post",
    path: "/v3/svc/renders",
    operationId: "submitRender",
    summary: "Queue a render of an uploaded asset or of a project at a URL.",
    body: renderRequestSchema,
    success: { status: 201, data: submitRenderResponseSchema },
    errors: [
      "invalid_parameter",
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
  {
    method: "get",
    path: "/v3/svc/renders/{id}",
    operationId: "getRender",
    summary: "A render record, with fresh signed video and thumbnail URLs once completed.",
    success: { status: 200, data: renderRecordSchema },
    errors: ["svc_render_not_found"],
  },
  {
    method: "get",
    path: "/v3/svc/renders",
    operationId: "listRenders",
    summary: "Renders, newest first, a page at a time.",
    query: listRendersQuerySchema,
    success: { status: 200, raw: renderListSchema },
    errors: ["invalid_parameter"],
  },
  {
    method: "delete",
    path: "/v3/svc/renders/{id}",
    operationId: "deleteRender",
    summary: "Soft-delete a render; its files are purged and a later GET is 404.",
    success: { status: 200, data: deleteRenderResponseSchema },
    errors: ["svc_render_not_found"],
  },
  {
    method: "get",
    path: "/v3/users/me",
    operationId: "getMe",
    summary: "The signed-in account and its credits.",
    success: { status: 200, data: userRecordSchema },
    errors: [],
  },
];

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return rest;
}

function errorResponses(codes: ApiErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ApiErrorCode[]>();
  for (const code of [...new Set([...codes, ...COMMON_ERRORS])]) {
    const status = API_ERRORS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: list.join(", "),
      content: {
        "application/json": {
          schema: {
            allOf: [
              { $ref: "#/components/schemas/ApiError" },
              { properties: { error: { properties: { code: { enum: list } } } } },
            ],
          },
        },
      },
    };
  }
  return responses;
}

function operationObject(operation: Operation): Record<string, unknown> {
  const parameters: unknown[] = [];
  if (operation.path.includes("{id}")) {
    parameters.push({ name: "id", in: "path", required: true, schema: { type: "string" } });
  }
  if (operation.query) {
    const query = jsonSchema(operation.query, "input") as {
      properties?: Record<string, unknown>;
      required?: string[];
    };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      parameters.push({
        name,
        in: "query",
        required: query.required?.includes(name) ?? false,
        schema,
      });
    }
  }
  if (operation.idempotent) {
    parameters.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description: "Same key + same body replays the first answer for 24 h; another body is 409.",
      schema: { type: "string", pattern: "^[A-Za-z0-9_:.-]{1,255}$" },
    });
  }
  const success = operation.success.raw ?? dataEnvelope(operation.success.data ?? z.object({}));
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(operation.body
      ? {
          requestBody: {
            required: true,
            content: { "application/json": { schema: jsonSchema(operation.body, "input") } },
          },
        }
      : {}),
    responses: {
      [String(operation.success.status)]: {
        description: "Success",
        content: { "application/json": { schema: jsonSchema(success, "output") } },
      },
      ...errorResponses(operation.errors),
    },
  };
}

/** The whole document. Its version is the API's (/v3), so it changes only when the API does. */
export function buildOpenApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of OPERATIONS) {
    paths[operation.path] = {
      ...paths[operation.path],
      [operation.method]: operationObject(operation),
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "svc render service",
      version: "3",
      description:
        "Render HTML video compositions: upload a project zip as an asset, submit renders, poll, download. Errors are {error: {code, message, param?}}; every code and its status is listed in x-error-codes.",
    },
    servers: [{ url: `http://127.0.0.1:${LOCAL_SERVICE_PORT}` }],
    security: [{ apiKey: [] }, { bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
        bearer: { type: "http", scheme: "bearer" },
      },
      schemas: { ApiError: jsonSchema(apiErrorEnvelopeSchema, "output") },
    },
    "x-error-codes": API_ERRORS,
  };
}
