// Errors the service returns on purpose: a stable code from SPEC.md section 4 (see API_ERRORS in
// src/shared/api.ts for the full list and statuses), a human message and optionally the param at
// fault. app.ts turns them into `{error:{code,message,param}}` in one place.
import { API_ERRORS, type ApiErrorBody, type ApiErrorCode } from "../shared/api";

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

/** The `error` member of an error answer. */
export function errorBody(error: ApiError): ApiErrorBody {
  return error.param === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, param: error.param };
}

/** What a client is told of an error that is not an ApiError (a bug): no detail, try again. */
export function internalError(): ApiError {
  return new ApiError("internal_error", "the service hit an internal error; try again");
}
