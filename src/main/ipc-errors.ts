// How a failure in the main process crosses the IPC boundary: always `{code, message, hint}`.
// Core and service errors keep their code and get the app's own hint (src/main/hints.ts); invalid input from the renderer becomes
// `invalid_input` naming the field; anything unexpected becomes `internal_error`. Messages go
// through the core's secret scrubber, so a key, token or signed URL never reaches the renderer.
import { z } from "zod";
import type { IpcError } from "../shared/ipc";
import { ClientError, scrubSecrets } from "../core/index";
import { desktopHint } from "./hints";

export function toIpcError(error: unknown): IpcError {
  if (error instanceof ClientError) {
    const hint = desktopHint(error) ?? error.hint;
    return {
      code: error.code,
      message: scrubSecrets(error.message),
      ...(hint ? { hint: scrubSecrets(hint) } : {}),
    };
  }
  if (error instanceof z.ZodError) {
    const issue = error.issues[0];
    const field = issue?.path.join(".");
    return {
      code: "invalid_input",
      message: `${field ? `${field}: ` : ""}${issue?.message ?? "invalid input"}`,
      hint: "This is a bug in the app's screens; please report it.",
    };
  }
  return {
    code: "internal_error",
    message: scrubSecrets(error instanceof Error ? error.message : String(error)),
    hint: "This looks like a bug in svc Desktop; please report it.",
  };
}

/** A failure the main process itself decides on (not from the core or the service). */
export function appError(code: string, message: string, hint?: string): ClientError {
  return new ClientError(code, message, hint);
}
