// Small pieces every route uses: the authenticated principal on the request, and turning a zod
// failure into 400 invalid_parameter naming the first field at fault.
import type { FastifyRequest } from "fastify";
import type { z } from "zod";
import type { Principal } from "../auth/accounts";
import { ApiError } from "../errors";

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
  if (body !== undefined && body !== null && (typeof body !== "object" || Array.isArray(body))) {
    throw new ApiError("invalid_parameter", "the request body must be a JSON object");
  }
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const param = paramName(issue.path);
  if (!param) throw new ApiError("invalid_parameter", issue.message);
  const field = String(issue.path[issue.path.length - 1]);
  const missing = issue.code === "invalid_type" && /received undefined/.test(issue.message);
  const message = missing
    ? `${param} is required`
    : issue.message.startsWith(field)
      ? issue.message
      : `${param}: ${issue.message}`;
  throw new ApiError("invalid_parameter", message, param);
}

/** A field's name as clients write it: `outputs[2].still.time`, `variables.size`. */
export function paramName(path: readonly PropertyKey[]): string {
  return path
    .map((part, i) =>
      typeof part === "number" ? `[${part}]` : `${i === 0 ? "" : "."}${String(part)}`,
    )
    .join("");
}

/** The credential a request carries: `x-api-key`, else a Bearer token. */
export function credentialOf(
  headers: Record<string, string | string[] | undefined>,
): string | undefined {
  const apiKey = headers["x-api-key"];
  if (typeof apiKey === "string" && apiKey.trim() !== "") return apiKey.trim();
  const authorization = headers.authorization;
  if (typeof authorization === "string") {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  return undefined;
}
