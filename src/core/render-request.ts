// What one cloud render asks for, checked before anything touches the network: render options
// through the shared zod schema (so "4k cannot be webm/mov" is the same rule everywhere), the
// idempotency key's alphabet, a usable callback URL, and variables against the composition's
// schema (strict: fail fast; otherwise: warnings). Refusals are `invalid_parameter` naming the
// `param`, in words that fit the CLI and the app alike; the CLI's flag words are in src/cli.
import { randomUUID } from "node:crypto";
import type { RenderRequest } from "../shared/api";
import type { CaptionsRequest } from "../shared/captions";
import { IDEMPOTENCY_KEY_PATTERN } from "../shared/limits";
import { checkOutputs, type OutputSpec } from "../shared/outputs";
import {
  checkRenderOptions,
  toRenderOptions,
  type AspectRatio,
  type RenderSettingFields,
} from "../shared/render-options";
import {
  blockingIssues,
  formatVariableIssue,
  validateVariables,
  type VariableDefinition,
  type VariableValues,
} from "../shared/variables";
import { ClientError } from "./errors";

export type ProjectSource =
  | { type: "dir"; dir: string }
  | { type: "asset_id"; assetId: string }
  | { type: "url"; url: string };

/** Render setting fields (shared schema) plus what one cloud render adds. `aspectRatio` undefined:
 * detected for a local project; the service decides for asset/url (else 16:9). */
export interface RenderSettings extends RenderSettingFields {
  composition: string;
  variables?: VariableValues | undefined;
  strictVariables?: boolean | undefined;
  title?: string | undefined;
  callbackUrl?: string | undefined;
  callbackId?: string | undefined;
  /**
   * Extra files from the same render after the main one (shared/outputs.ts; `--also`). When given,
   * the request's `outputs` is the main output followed by these.
   */
  also?: OutputSpec[] | undefined;
  /**
   * The main output's own fields when they differ from the top level (the app's sizes: a render
   * whose first size is not the composition's own), so `outputs` starts with it instead of `{}`.
   */
  main?: OutputSpec | undefined;
  /** Captions from a file inside the project (shared/captions.ts captionsRequestSchema). */
  captions?: CaptionsRequest | undefined;
}

export function checkSettings(settings: RenderSettings): void {
  const checked = checkRenderOptions(settings);
  if (!checked.ok) {
    throw invalidParameter(checked.problem.param, checked.problem.message);
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
      throw invalidParameter(
        "callback_url",
        `The callback URL must be an HTTPS URL, not "${settings.callbackUrl}".`,
        settings.callbackUrl,
      );
    }
  }
  if (settings.also?.length || settings.main) {
    const problem = checkOutputs({
      ...settings,
      outputs: [settings.main ?? {}, ...(settings.also ?? [])],
    });
    if (problem) {
      throw invalidParameter("outputs", `outputs[${problem.index}]: ${problem.message}`);
    }
  }
  if (settings.callbackId !== undefined && settings.callbackUrl === undefined) {
    throw invalidParameter("callback_id", "A callback id needs a callback URL.");
  }
}

function invalidParameter(param: string, message: string, value?: string): ClientError {
  return new ClientError("invalid_parameter", message, undefined, {
    usage: true,
    param,
    ...(value !== undefined ? { params: { value } } : {}),
  });
}

export function checkIdempotencyKey(key: string): string {
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw invalidParameter(
      "idempotency_key",
      `An idempotency key must be 1 to 255 characters from A-Z a-z 0-9 _ : . - (got ${key.length} characters${key.length > 0 && key.length <= 255 ? " with others" : ""}).`,
      key,
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
  const blocking = blockingIssues(issues, strict);
  if (blocking.length > 0) {
    throw new ClientError(
      "svc_project_invalid",
      `The variables do not match the composition: ${blocking.map(formatVariableIssue).join("; ")}.`,
      strict
        ? "Fix the variable values, or turn strict variables off to render with warnings."
        : "Fix the variable values: a wrong type, choice or range is refused by the service.",
      { params: strict ? { strict: "yes" } : {} },
    );
  }
  return issues.map((issue) => `variable ${formatVariableIssue(issue)}`);
}

export function buildRenderRequest(
  project: { type: "asset_id"; asset_id: string } | { type: "url"; url: string },
  settings: RenderSettings,
  aspectRatio: AspectRatio | undefined,
): RenderRequest {
  return {
    project,
    ...toRenderOptions({ ...settings, aspectRatio }),
    composition: settings.composition,
    variables: settings.variables ?? {},
    strict_variables: settings.strictVariables ?? false,
    ...(settings.title !== undefined ? { title: settings.title } : {}),
    ...(settings.callbackUrl !== undefined ? { callback_url: settings.callbackUrl } : {}),
    ...(settings.callbackId !== undefined ? { callback_id: settings.callbackId } : {}),
    ...(settings.also?.length || settings.main
      ? { outputs: [settings.main ?? {}, ...(settings.also ?? [])] }
      : {}),
    ...(settings.captions ? { captions: settings.captions } : {}),
  };
}
