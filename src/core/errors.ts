// Errors of the client core: a stable `code`, a one-line `message`, a `hint` that says how to fix
// it, and whether it was a mistake in how the command was called (`usage`, exit 2) or a failure
// (exit 1). API answers keep the service's code and HTTP status. Every message goes through
// `scrubSecrets` first, so an API key or a signed URL never reaches a terminal or a log.

export class ClientError extends Error {
  override readonly name = "ClientError";
  constructor(
    readonly code: string,
    message: string,
    readonly hint?: string,
    readonly options: { usage?: boolean; status?: number; param?: string; cause?: unknown } = {},
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
}

export function usageError(message: string, hint?: string): ClientError {
  return new ClientError("usage_error", message, hint, { usage: true });
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
