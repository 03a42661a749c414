// The rules of `svc cloud render`'s flags, in the CLI's words: exactly one of a project folder,
// --asset-id and --url, and the render options, callback and idempotency key checked by the
// client core's rules (src/core/render-request.ts, over the shared schema) but refused naming the flag.
import { ClientError } from "../../core/index";
import { checkIdempotencyKey, checkSettings, type ProjectSource } from "../../core/index";
import type { RenderSettings } from "../../core/index";
import { UsageError } from "../errors";
import { flagHint } from "../hints";

/** Picks the one project source among a folder, --asset-id and --url. */
export function projectSourceFromFlags(input: {
  dir?: string | undefined;
  assetId?: string | undefined;
  url?: string | undefined;
}): ProjectSource {
  const given = [
    input.dir !== undefined ? "a project folder" : undefined,
    input.assetId !== undefined ? "--asset-id" : undefined,
    input.url !== undefined ? "--url" : undefined,
  ].filter((value): value is string => value !== undefined);
  if (given.length > 1) {
    throw new UsageError(
      `Give only one of a project folder, --asset-id or --url (got ${given.join(" and ")}).`,
      "A folder is zipped and uploaded; --asset-id reuses an upload; --url renders a zip or HTML file from the web.",
    );
  }
  if (input.assetId !== undefined) {
    if (input.assetId.trim() === "") throw new UsageError("--asset-id must not be empty.");
    return { type: "asset_id", assetId: input.assetId.trim() };
  }
  if (input.url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(input.url);
    } catch {
      throw new UsageError(
        `--url must be a URL, not "${input.url}".`,
        "Example: --url https://example.com/project.zip",
      );
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
      throw new UsageError(`--url must be an http(s) URL, not "${input.url}".`);
    }
    return { type: "url", url: input.url };
  }
  return { type: "dir", dir: input.dir ?? "." };
}

/** The core's refusal of one parameter, said with the flag that sets it (the hint: hints.ts). */
const FLAG_MESSAGES: Record<string, (value: string) => string> = {
  callback_url: (value) => `--callback-url must be an HTTPS URL, not "${value}".`,
  callback_id: () => "--callback-id needs --callback-url.",
  idempotency_key: (value) =>
    `--idempotency-key must be 1 to 255 characters from A-Z a-z 0-9 _ : . - (got ${value.length} characters${value.length > 0 && value.length <= 255 ? " with others" : ""}).`,
};

function asFlagError(error: unknown): unknown {
  if (!(error instanceof ClientError) || error.code !== "invalid_parameter") return error;
  const message = FLAG_MESSAGES[error.params.param ?? ""]?.(error.params.value ?? "");
  return new UsageError(message ?? error.message, flagHint(error.params.param));
}

/** The render options, callback and idempotency key of a `svc cloud render` command line. */
export function checkCloudFlags(settings: RenderSettings, idempotencyKey?: string): void {
  try {
    checkSettings(settings);
    if (idempotencyKey !== undefined) checkIdempotencyKey(idempotencyKey);
  } catch (error) {
    throw asFlagError(error);
  }
}

/** --idempotency-key alone (svc publish). */
export function checkIdempotencyKeyFlag(key: string): string {
  try {
    return checkIdempotencyKey(key);
  } catch (error) {
    throw asFlagError(error);
  }
}
