// The service's words for an engine failure, as they end up in a render's `failure_message`: the
// reader is an API client (or the app showing the record), so hints name request fields
// (`composition`, `aspect_ratio`, `strict_variables`), never a CLI flag.
import { isEngineError, type EngineError } from "../../engine/contract";

type Hint = (params: Readonly<Record<string, string>>) => string | undefined;

const SERVICE_HINTS: Record<string, Hint> = {
  composition_not_found: () =>
    "Check the request's `composition`: it names the entry file inside the project archive.",
  aspect_mismatch: (p) =>
    p.requested
      ? `Leave out \`aspect_ratio\` to use the composition's own shape${p.detected ? ` (${p.detected})` : ""}, or change data-width/data-height.`
      : undefined,
  invalid_variables: () =>
    "Fix the `variables`, or send `strict_variables: false` to render with warnings.",
  encode_failed: () => "The service's encoder failed; try again, and report it if it repeats.",
  ffmpeg_not_found: () => "The service has no working FFmpeg; its operator must install one.",
  browser_not_found: () => "The service has no working browser; its operator must install one.",
};

/** `message` plus the service's hint for an engine error, for `failure_message`. */
export function engineFailureMessage(error: EngineError): string {
  const hint = SERVICE_HINTS[error.code]?.(error.params) ?? error.hint;
  return hint ? `${error.message} ${hint}` : error.message;
}

/**
 * `failure_message` of a render whose chunks all rendered but could not be joined on any attempt:
 * names that step, since "the encoder" (the engine's words for FFmpeg) points at rendering frames.
 * Only an engine error's own message is shown; anything else stays in the worker's log.
 */
export function joinFailureMessage(error: unknown, attempts: number): string {
  const cause = isEngineError(error) ? ` (${error.message})` : "";
  return (
    `joining the rendered chunks into the video failed on ${attempts === 1 ? "its only attempt" : `all ${attempts} attempts`}${cause}. ` +
    "Every chunk rendered; try again, and report it if it repeats."
  );
}
