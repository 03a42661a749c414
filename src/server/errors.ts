// Errors the service returns on purpose: a stable code from SPEC.md section 4 (see API_ERRORS in
// src/shared/api.ts for the full list and statuses), a human message and optionally the param at
// fault. app.ts turns them into `{error:{code,message,param}}` in one place.
import { API_ERRORS, type ApiErrorCode } from "../shared/api";

export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number;
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly param?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = API_ERRORS[code];
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}
