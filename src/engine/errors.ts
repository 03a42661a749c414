// Typed engine errors: a stable code, a one-line message, `params` (the option at fault, what was
// detected) and a neutral hint. The engine runs under the CLI (`svc render`), the service's
// workers and the template, so its words name no flag or request field: each of those says the
// hint in its own words from code + params, and the CLI maps codes to exit codes.

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
  | "capture_failed"
  /** A chunk of a distributed render found another frame count than its render was planned for. */
  | "composition_changed"
  /** `svc captions transcribe`: pocketsphinx or its English model is not installed. */
  | "transcriber_not_found"
  /** `svc captions transcribe`: the composition declares no sound inside its duration. */
  | "no_audio"
  | "transcribe_failed";

export class EngineError extends Error {
  override readonly name = "EngineError";
  constructor(
    readonly code: EngineErrorCode,
    message: string,
    readonly hint?: string,
    readonly details?: unknown,
    readonly params: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** What a render stopped by its signal or by cancel() fails with, wherever it was. */
export function cancelledError(): EngineError {
  return new EngineError("cancelled", "The render was cancelled.", "Start the render again.");
}

export function isEngineError(error: unknown): error is EngineError {
  return error instanceof EngineError;
}
