// What one `svc cloud render` asks for, checked before anything touches the network: exactly one
// project source, render options through the shared zod schema (so "4k cannot be webm/mov" is the
// same rule everywhere), the idempotency key's alphabet, a usable callback URL, and variables
// against the composition's schema (strict: fail fast; otherwise: warnings).
import { randomUUID } from "node:crypto";
import type { RenderRequest } from "../shared/api";
import { IDEMPOTENCY_KEY_PATTERN } from "../shared/limits";
import {
  checkRenderOptions,
  type AspectRatio,
  type OutputFormat,
  type Quality,
  type Resolution,
} from "../shared/render-options";
import {
  formatVariableIssue,
  validateVariables,
  type VariableDefinition,
  type VariableValues,
} from "../shared/variables";
import { ClientError, usageError } from "./errors";

export type ProjectSource =
  | { type: "dir"; dir: string }
  | { type: "asset_id"; assetId: string }
  | { type: "url"; url: string };

export interface RenderSettings {
  fps: number;
  quality: Quality;
  format: OutputFormat;
  resolution: Resolution;
  /** Undefined: detected for a local project; the service decides for asset/url (else 16:9). */
  aspectRatio?: AspectRatio | undefined;
  composition: string;
  variables?: VariableValues | undefined;
  strictVariables?: boolean | undefined;
  title?: string | undefined;
  callbackUrl?: string | undefined;
  callbackId?: string | undefined;
}

/** Picks the one project source among a folder, --asset-id and --url. */
export function chooseProjectSource(input: {
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
    throw usageError(
      `Give only one of a project folder, --asset-id or --url (got ${given.join(" and ")}).`,
      "A folder is zipped and uploaded; --asset-id reuses an upload; --url renders a zip or HTML file from the web.",
    );
  }
  if (input.assetId !== undefined) {
    if (input.assetId.trim() === "") throw usageError("--asset-id must not be empty.");
    return { type: "asset_id", assetId: input.assetId.trim() };
  }
  if (input.url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(input.url);
    } catch {
      throw usageError(
        `--url must be a URL, not "${input.url}".`,
        "Example: --url https://example.com/project.zip",
      );
    }
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
      throw usageError(`--url must be an http(s) URL, not "${input.url}".`);
    }
    return { type: "url", url: input.url };
  }
  return { type: "dir", dir: input.dir ?? "." };
}

export function checkSettings(settings: RenderSettings): void {
  const checked = checkRenderOptions({
    fps: settings.fps,
    quality: settings.quality,
    format: settings.format,
    resolution: settings.resolution,
    aspect_ratio: settings.aspectRatio,
  });
  if (!checked.ok) {
    throw usageError(
      checked.problem.message,
      checked.problem.param === "format" ? "Use --format mp4 with --resolution 4k." : undefined,
    );
  }
  if (settings.callbackUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(settings.callbackUrl);
    } catch {
      url = undefined;
    }
    const loopback = url && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
    if (!url || !(url.protocol === "https:" || (url.protocol === "http:" && loopback))) {
      throw usageError(
        `--callback-url must be an HTTPS URL, not "${settings.callbackUrl}".`,
        "Example: --callback-url https://example.com/hooks/svc",
      );
    }
  }
  if (settings.callbackId !== undefined && settings.callbackUrl === undefined) {
    throw usageError(
      "--callback-id needs --callback-url.",
      "The id is echoed in the webhook call.",
    );
  }
}

export function checkIdempotencyKey(key: string): string {
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw usageError(
      `--idempotency-key must be 1 to 255 characters from A-Z a-z 0-9 _ : . - (got ${key.length} characters${key.length > 0 && key.length <= 255 ? " with others" : ""}).`,
      "Example: --idempotency-key release-2024-06-01.v2",
    );
  }
  return key;
}

/**
 * One key per run, sent on both POSTs: a retried step can never create a second asset or render.
 * `client` names who made it ("svc-cli", "svc-desktop"), so the service's records tell them apart.
 */
export function newIdempotencyKey(client: string): string {
  return `${client}:${randomUUID()}`;
}

/**
 * Checks values against a local project's schema. Strict: any issue fails before upload.
 * Otherwise the issues come back as warnings.
 */
export function checkVariables(
  schema: VariableDefinition[],
  values: VariableValues | undefined,
  strict: boolean,
): string[] {
  if (!values) return [];
  const issues = validateVariables(schema, values);
  if (issues.length === 0) return [];
  const lines = issues.map(formatVariableIssue);
  if (strict) {
    throw new ClientError(
      "svc_project_invalid",
      `The variables do not match the composition: ${lines.join("; ")}.`,
      "Fix the --variables values, or drop --strict-variables to render with warnings.",
    );
  }
  return lines.map((line) => `variable ${line}`);
}

export function buildRenderRequest(
  project: { type: "asset_id"; asset_id: string } | { type: "url"; url: string },
  settings: RenderSettings,
  aspectRatio: AspectRatio | undefined,
): RenderRequest {
  return {
    project,
    fps: settings.fps,
    quality: settings.quality,
    format: settings.format,
    resolution: settings.resolution,
    ...(aspectRatio ? { aspect_ratio: aspectRatio } : {}),
    composition: settings.composition,
    variables: settings.variables ?? {},
    strict_variables: settings.strictVariables ?? false,
    ...(settings.title !== undefined ? { title: settings.title } : {}),
    ...(settings.callbackUrl !== undefined ? { callback_url: settings.callbackUrl } : {}),
    ...(settings.callbackId !== undefined ? { callback_id: settings.callbackId } : {}),
  };
}
