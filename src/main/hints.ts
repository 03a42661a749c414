// The desktop app's words for errors that come from the client core (and, through the service, the
// engine): those carry a code and params but name no screen, button or setting; this table does,
// and never a CLI flag. A code not listed here keeps the error's own neutral hint.
import { hintKey, type ErrorParams } from "../core/index";

type Hint = (params: ErrorParams) => string | undefined;

const SIGN_IN = "Sign in again on the Account screen.";

const DESKTOP_HINTS: Record<string, Hint> = {
  authentication_failed: () => SIGN_IN,
  svc_render_not_found: () => "It may have been deleted; it is no longer in History.",
  svc_asset_not_found: () =>
    "The uploaded project is no longer on the service; render the project folder again.",
  svc_project_invalid: (p) =>
    p.strict === "yes"
      ? "Fix the values marked in the Variables form, or turn off Strict variables to render with warnings."
      : "Fix the project or the values in the Variables form, then render again.",
  svc_idempotency_conflict: () => "Remove the render from the queue and render again.",
  invalid_parameter: () => "Check the render options on the Project screen.",
  unexpected_response: () =>
    "Check the service URL in Settings: it must point at an svc render service of a matching version.",
  http_error: () => "Check the service URL in Settings.",
  network_error: (p) =>
    p.topic === "download"
      ? "Click Retry to download it again."
      : "Check your connection and the service URL in Settings.",
  download_truncated: () => "Click Retry to download it again.",
  render_not_completed: (p) =>
    p.status === "failed" ? undefined : "Wait for it to finish; the queue downloads it then.",
  max_wait_exceeded: () => "It keeps rendering on the service; click Retry to wait for it again.",
  render_failed: () =>
    "Fix the composition (the preview on the Project screen plays it as it renders), then render again.",
  access_denied: () => "The sign-in was denied in the browser; click Sign in to try again.",
  expired_token: () =>
    "The code expired before it was approved; click Sign in with device code for a new one.",
  invalid_grant: () => SIGN_IN,
  oauth_state_mismatch: () => "Click Sign in with browser again, and use the link it shows.",
  login_timeout: () =>
    "Click Sign in with browser again, or use Sign in with device code on another computer.",
  credentials_unreadable: () =>
    "Check the file's permissions, or remove it and sign in again on the Account screen.",
  credentials_corrupt: () => "Remove the file and sign in again on the Account screen.",
  project_not_found: () => "Choose the project folder again on the Project screen.",
  composition_outside_project: () => "Pick the composition from the list on the Project screen.",
  composition_not_found: () =>
    "Create index.html in the project folder, or pick another composition on the Project screen.",
  composition_missing: () => "Create it, or pick another composition on the Project screen.",
  aspect_mismatch: (p) =>
    p.requested
      ? `Choose the aspect ratio "Detected"${p.detected ? ` (${p.detected})` : ""} on the Project screen, or change data-width/data-height.`
      : undefined,
  invalid_variables: () =>
    "Fix the values marked in the Variables form, or turn off Strict variables to render with warnings.",
};

/** The app's hint for an error of the core, or undefined to keep the error's own. */
export function desktopHint(error: { code: string; params?: ErrorParams }): string | undefined {
  const params = error.params ?? {};
  return DESKTOP_HINTS[hintKey(error)]?.(params);
}
