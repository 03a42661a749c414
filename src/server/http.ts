// Small pieces every route uses: the authenticated principal on the request, and turning a zod
// failure into 400 invalid_parameter naming the first field at fault.
import type { FastifyRequest } from "fastify";
import type { z } from "zod";
import type { Principal } from "./accounts";
import { ApiError } from "./errors";

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new ApiError("authentication_failed", "missing or invalid API key");
  return request.principal;
}

export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const param = issue.path.map(String).join(".");
  const message = issue.code === "invalid_type" && issue.input === undefined ? `${param || "body"} is required` : issue.message;
  throw new ApiError("invalid_parameter", param ? `${param}: ${message}` : message, param || undefined);
}
