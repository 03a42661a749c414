// Errors of the client core: a stable `code`, a one-line `message`, `params` (what the error is
// about: a render id, the option at fault) and a neutral `hint`. The core is shared by the CLI and
// the desktop app, so its words name no command, flag or button: each edge turns code + params
// into a hint in its own words (src/cli/hints.ts, src/main/hints.ts) and falls back to `hint`.
// `usage` marks a mistake in how the core was called (exit 2 in the CLI). API answers keep the
// service's code and HTTP status. Every message goes through `scrubSecrets` first, so an API key
// or a signed URL never reaches a terminal or a log.

/** What an error is about, for the edges' hint tables: e.g. `{renderId}`, `{topic: "download"}`. */
export type ErrorParams = Readonly<Record<string, string>>;

export class ClientError extends Error {
  override readonly name = "ClientError";
  constructor(
    readonly code: string,
    message: string,
    readonly hint?: string,
    readonly options: {
      usage?: boolean;
      status?: number;
      param?: string;
      cause?: unknown;
      params?: ErrorParams;
    } = {},
  ) {
    super(scrubSecrets(message));
  }

  /** True for a mistake in the command line (exit code 2). */
  get usage(): boolean {
    return this.options.usage === true;
  }

  /** HTTP status when the service answered with an error. */
  get status(): number | undefined {
    return this.options.status;
  }

  /** What the error is about; the parameter at fault (`param`) is always among them. */
  get params(): ErrorParams {
    const { param, params } = this.options;
    return param ? { ...params, param } : (params ?? {});
  }
}

/**
 * The key of an error in the edges' hint tables: a failed render is one situation whatever the
 * engine's code, anything else is its code.
 */
export function hintKey(error: { code: string; params?: ErrorParams }): string {
  return error.params?.topic === "render_failed" ? "render_failed" : error.code;
}

export function usageError(
  code: string,
  message: string,
  hint?: string,
  params?: ErrorParams,
): ClientError {
  return new ClientError(code, message, hint, { usage: true, ...(params ? { params } : {}) });
}

/** The run was stopped by its AbortSignal (Ctrl+C). */
export function interruptedError(hint?: string): ClientError {
  return new ClientError("interrupted", "Interrupted.", hint);
}

const registeredSecrets = new Set<string>();

/** Remembers a secret (API key, token) so every later message has it replaced. */
export function registerSecret(secret: string | undefined): void {
  if (secret && secret.length >= 6) registeredSecrets.add(secret);
}

/** Replaces known secrets, signatures of signed URLs and key-shaped strings with [REDACTED]. */
export function scrubSecrets(text: string): string {
  let scrubbed = text;
  for (const secret of registeredSecrets) scrubbed = scrubbed.split(secret).join("[REDACTED]");
  return scrubbed
    .replace(
      /([?&](?:sig|signature|token|api_key|access_token|refresh_token)=)[^&\s"']*/gi,
      "$1[REDACTED]",
    )
    .replace(/\bsvc_key_[A-Za-z0-9_-]+/g, "svc_key_[REDACTED]")
    .replace(/\b(Bearer\s+)[^\s"']+/gi, "$1[REDACTED]");
}
