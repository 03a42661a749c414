// The /v3 API described as an OpenAPI 3.1 document, generated from the operations table the
// routes declare their schemas from (operations.ts: fastify validates and serialises with the
// same zod schemas), so the description cannot drift from what the service accepts and answers. Served at GET /v3/openapi.json and checked in as docs/openapi.json (a test fails
// when they differ; `npm run openapi` rewrites it). Every code of API_ERRORS appears with its
// status: in the operations that can answer it and in the `ApiError` component.
import { z } from "zod";
import { API_ERRORS, apiErrorEnvelopeSchema, type ApiErrorCode } from "../../shared/api";
import { LOCAL_SERVICE_PORT } from "../../shared/limits";
import { COMMON_ERRORS, OPERATIONS, type Operation } from "./operations";

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" });
  return rest;
}

function errorResponses(codes: readonly ApiErrorCode[]): Record<string, unknown> {
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

function operationObject(operationId: string, operation: Operation): Record<string, unknown> {
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
  return {
    operationId,
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
        content: { "application/json": { schema: jsonSchema(operation.success.schema, "output") } },
      },
      ...errorResponses(operation.errors),
    },
  };
}

/** The whole document. Its version is the API's (/v3), so it changes only when the API does. */
export function buildOpenApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [operationId, operation] of Object.entries(OPERATIONS)) {
    paths[operation.path] = {
      ...paths[operation.path],
      [operation.method.toLowerCase()]: operationObject(operationId, operation),
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
