// The CLI's words for errors that come from the client core and the engine: those carry a code
// and params but name no command or flag (the desktop app shows the same errors in its own words,
// src/main/hints.ts). A code not listed here keeps the error's own neutral hint.
import { hintKey, type ErrorParams } from "../core/local";

type Hint = (params: ErrorParams) => string | undefined;

const CHECK_FLAG = "Check the flag named in the message (`svc cloud render --help`).";

/** How to set right the flag behind a refused parameter. */
const FLAG_HINTS: Record<string, string> = {
  format: "Use --format mp4 with --resolution 4k.",
  callback_url: "Example: --callback-url https://example.com/hooks/svc",
  callback_id: "The id is echoed in the webhook call.",
  idempotency_key: "Example: --idempotency-key release-2024-06-01.v2",
};

const CLI_HINTS: Record<string, Hint> = {
  authentication_failed: (p) =>
    p.credential === "oauth"
      ? "Sign in again (`svc auth login`)."
      : "Sign in again with `svc auth login --api-key` (or set SVC_API_KEY to a valid key).",
  svc_render_not_found: () => "Check the render id with `svc cloud list`.",
  svc_render_finished: () => "`svc cloud get <id>` shows how it ended.",
  svc_asset_not_found: () =>
    "Check the asset id; `svc publish` or `svc cloud render DIR` prints the id of an upload.",
  svc_project_invalid: (p) =>
    p.strict === "yes"
      ? "Fix the --variables values, or drop --strict-variables to render with warnings."
      : "Fix the project or the --variables values, then run the command again.",
  svc_idempotency_conflict: () =>
    "This --idempotency-key was already used for a different request; use a new key.",
  invalid_parameter: (p) => flagHint(p.param) ?? CHECK_FLAG,
  unexpected_response: () =>
    "Check that SVC_API_URL points at an svc render service of a matching version.",
  http_error: () => "Check that SVC_API_URL points at an svc render service.",
  network_error: (p) =>
    p.topic === "download"
      ? `Run \`svc cloud download ${p.renderId}\` to try again.`
      : "Check SVC_API_URL and your connection, or start a local service with `svc server`.",
  download_truncated: (p) => `Run \`svc cloud download ${p.renderId}\` to try again.`,
  render_not_completed: (p) =>
    p.status === "failed" ? undefined : `Wait for it with \`svc cloud download ${p.renderId}\`.`,
  max_wait_exceeded: (p) =>
    `Fetch it later with \`svc cloud download ${p.renderId}\`, or wait longer with --max-wait.`,
  render_failed: () =>
    "Fix the composition (try `svc render` locally to see the problem), then render again.",
  access_denied: () =>
    "The sign-in was denied in the browser; run `svc auth login` again to retry.",
  expired_token: () =>
    "The code expired before it was approved; run `svc auth login --device` again.",
  invalid_grant: () => "The sign-in is no longer valid; run `svc auth login` again.",
  oauth_state_mismatch: () => "Run `svc auth login` again, and use the link it prints.",
  login_timeout: () =>
    "Run `svc auth login` again; on a remote machine use `svc auth login --device`.",
  credentials_unreadable: () =>
    "Check the file's permissions, or remove it and run `svc auth login` again.",
  credentials_corrupt: () => "Remove the file and run `svc auth login` again.",
  batch_strict_columns: () =>
    "Drop --strict-variables to leave such columns out, or use them in --output-pattern.",
  batch_pattern_invalid: () => 'Example: --output-pattern "{title}-{row}"',
  project_not_found: () =>
    "Give the project folder that holds index.html, or use --asset-id / --url.",
  composition_outside_project: () =>
    "Give -c/--composition relative to the project folder, e.g. -c scenes/intro.html.",
  composition_not_found: (p) =>
    p.composition === undefined || p.composition === "index.html"
      ? "Create index.html in the project folder, or name the entry file with -c/--composition."
      : "Check -c/--composition: it is a path relative to the project folder, and must stay inside it.",
  composition_missing: () => "Create it, or name the entry file with -c/--composition.",
  aspect_mismatch: (p) =>
    p.requested
      ? `Leave out --aspect-ratio to use the composition's own shape${p.detected ? ` (${p.detected})` : ""}, or change data-width/data-height.`
      : undefined,
  invalid_variables: () => "Fix the values, or drop --strict-variables to render with warnings.",
  invalid_options: (p) =>
    p.option === "workers"
      ? "Use --workers 2 or --workers auto."
      : p.option === "fps"
        ? "Use a whole number of frames per second from 1 to 240 (at most 50 for gif), e.g. --fps 30."
        : p.option === "format"
          ? "Render 4k as mp4, or use 1080p for the other formats."
          : p.option
            ? `Check the value of --${p.option.replace(/_/g, "-")}.`
            : undefined,
  cancelled: () => "Run the same command again to start over.",
  ffmpeg_not_found: () => "Run `svc doctor` to check FFmpeg.",
  encode_failed: () => "Run `svc doctor` to check FFmpeg and its encoders.",
};

/** How to set right the flag behind parameter `param`, when there is more to say than its name. */
export function flagHint(param: string | undefined): string | undefined {
  return param ? FLAG_HINTS[param] : undefined;
}

/** The CLI's hint for an error of the core or the engine, or undefined to keep its own. */
export function cliHint(error: { code: string; params?: ErrorParams }): string | undefined {
  const params = error.params ?? {};
  return CLI_HINTS[hintKey(error)]?.(params);
}
