// Typed engine errors: a stable code, a one-line message and a hint that says how to fix it.
// The CLI maps them to exit codes and the service to failure_code/failure_message.

export type EngineErrorCode =
  | "composition_not_found"
  | "aspect_mismatch"
  | "invalid_variables"
  | "invalid_options"
  | "browser_not_found"
  | "ffmpeg_not_found"
  | "page_error"
  | "timeout"
  | "cancelled"
  | "encode_failed"
  | "capture_failed";

export class EngineError extends Error {
  override readonly name = "EngineError";
  constructor(
    readonly code: EngineErrorCode,
    message: string,
    readonly hint?: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export function isEngineError(error: unknown): error is EngineError {
  return error instanceof EngineError;
}
