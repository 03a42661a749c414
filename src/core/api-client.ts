// The /v3 API client (SPEC.md section 4) on `got`. One place decides what is retried: GET, PUT and
// DELETE, and POSTs that carry an Idempotency-Key (the service replays their first answer), on
// dropped connections, timeouts, 429 (honouring Retry-After) and 5xx, with exponential backoff.
// A 401 asks the `refreshCredential` hook (OAuth, later) for a new credential and replays once.
// Failures become ClientErrors with the service's code and message plus a hint; secrets are
// scrubbed from every message.
import got, { HTTPError, RequestError, type Got, type Method, type RetryObject } from "got";
import type { z } from "zod";
import {
  apiErrorEnvelopeSchema,
  assetCompositionSchema,
  assetRecordSchema,
  completeAssetResponseSchema,
  createAssetResponseSchema,
  dataEnvelope,
  deleteRenderResponseSchema,
  renderListSchema,
  renderRecordSchema,
  submitRenderResponseSchema,
  userRecordSchema,
  type CreateAssetRequest,
  type RenderList,
  type RenderRecord,
  type RenderRequest,
  type UserRecord,
} from "../shared/api";
import { ClientError, interruptedError, registerSecret, scrubSecrets } from "./errors";
import { renderQuoteSchema, type RenderQuote, type RenderQuoteRequest } from "../shared/quote";
import { clientRetryDelay } from "./backoff";

export interface ApiClientOptions {
  baseUrl: string;
  /** API key or OAuth access token; undefined sends no credential (the service answers 401). */
  credential: string | undefined;
  /** Called once after a 401; returns a fresh credential to replay with, or undefined. */
  refreshCredential?: () => Promise<string | undefined>;
  userAgent?: string;
  /** Retries of one request (default 4). */
  retryLimit?: number;
  /** First backoff step (default 1000 ms), doubled per attempt up to 30 s. */
  backoffMs?: number;
}

export interface RequestOptions<T extends z.ZodType> {
  schema: T;
  json?: unknown;
  searchParams?: Record<string, string | number>;
  idempotencyKey?: string | undefined;
  /** A POST the service treats as idempotent without a key (asset complete): safe to retry. */
  idempotent?: boolean;
  signal?: AbortSignal | undefined;
}

/** Network failures worth a retry. Refused connections are not: a wrong URL should fail fast. */
const RETRY_ERROR_CODES = [
  "ETIMEDOUT",
  "ECONNRESET",
  "EPIPE",
  "EAI_AGAIN",
  "ERR_STREAM_PREMATURE_CLOSE",
];
const RETRY_STATUS_CODES = [408, 429, 500, 502, 503, 504];

/** Neutral hints for the service's codes; the CLI and the app say more in their own words. */
const HINTS: Record<string, string> = {
  authentication_failed: "Sign in again, or use a valid API key.",
  svc_insufficient_credits: "Add credits to the account, then try again.",
  svc_render_not_found: "Check the render id.",
  svc_asset_not_found: "Check the asset id: it is given when a project is uploaded.",
  svc_project_invalid: "Fix the project or the variable values, then try again.",
  svc_project_too_large:
    "Exclude what the composition does not need in .svcignore, or shrink large media.",
  svc_idempotency_conflict:
    "This idempotency key was already used for a different request; use a new key.",
  rate_limit_exceeded: "Too many requests; wait a moment and try again.",
  invalid_parameter: "Check the option named in the message.",
  internal_error: "The service failed; try again, and report it if it keeps happening.",
  service_unavailable: "The service is starting or stopping; try again in a moment.",
};

const CHECK_SERVICE_VERSION =
  "Check that the service URL points at an svc render service of a matching version.";

export function isTransient(error: unknown): boolean {
  if (!(error instanceof ClientError)) return false;
  if (error.code === "network_error" || error.code === "timeout") return true;
  return error.status !== undefined && RETRY_STATUS_CODES.includes(error.status);
}

export class ApiClient {
  readonly baseUrl: string;
  private credential: string | undefined;
  private readonly http: Got;

  constructor(private readonly options: ApiClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.credential = options.credential;
    registerSecret(options.credential);
    const backoff = options.backoffMs ?? 1000;
    this.http = got.extend({
      headers: { "user-agent": options.userAgent ?? "svc-client" },
      timeout: { connect: 10_000, response: 60_000, socket: 60_000 },
      retry: {
        limit: options.retryLimit ?? 4,
        methods: ["GET", "PUT", "DELETE", "HEAD"],
        statusCodes: RETRY_STATUS_CODES,
        errorCodes: RETRY_ERROR_CODES,
        maxRetryAfter: 120_000,
        calculateDelay: (retry) => retryDelay(retry, backoff),
      },
    });
  }

  /** Got instance with this client's timeouts and retry rules (for signed storage URLs). */
  get transport(): Got {
    return this.http;
  }

  async request<T extends z.ZodType>(
    method: Method,
    path: string,
    options: RequestOptions<T>,
  ): Promise<{ data: z.output<T>; replayed: boolean }> {
    return this.withRefresh(() => this.send(method, path, options));
  }

  /** Runs `attempt`; after a 401, asks `refreshCredential` once for a new credential and replays. */
  private async withRefresh<R>(attempt: () => Promise<R>): Promise<R> {
    try {
      return await attempt();
    } catch (error) {
      if (error instanceof ClientError && error.status === 401 && this.options.refreshCredential) {
        const fresh = await this.options.refreshCredential();
        if (fresh) {
          registerSecret(fresh);
          this.credential = fresh;
          return attempt();
        }
      }
      throw error;
    }
  }

  private async send<T extends z.ZodType>(
    method: Method,
    path: string,
    options: RequestOptions<T>,
  ): Promise<{ data: z.output<T>; replayed: boolean }> {
    const headers: Record<string, string> = {};
    if (this.credential) headers.authorization = `Bearer ${this.credential}`;
    if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
    const url = `${this.baseUrl}${path}`;
    let response;
    try {
      response = await this.http(url, {
        method,
        headers,
        ...(options.json === undefined ? {} : { json: options.json }),
        ...(options.searchParams ? { searchParams: options.searchParams } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        responseType: "json",
        // A POST is safe to repeat only when the service can recognise the repeat.
        ...(method === "POST" && (options.idempotencyKey || options.idempotent)
          ? { retry: { methods: ["GET", "PUT", "DELETE", "HEAD", "POST"] as Method[] } }
          : {}),
      });
    } catch (error) {
      throw toClientError(error, this.baseUrl, options.signal);
    }
    const parsed = dataEnvelope(options.schema).safeParse(response.body);
    if (!parsed.success) {
      throw new ClientError(
        "unexpected_response",
        `The service answered ${method} ${path} with a body svc does not understand: ${parsed.error.issues[0]?.message ?? "invalid"}.`,
        CHECK_SERVICE_VERSION,
      );
    }
    return {
      data: (parsed.data as { data: z.output<T> }).data,
      replayed: response.headers["idempotent-replayed"] === "true",
    };
  }

  createAsset(body: CreateAssetRequest, idempotencyKey: string, signal?: AbortSignal) {
    return this.request("POST", "/v3/assets", {
      schema: createAssetResponseSchema,
      json: body,
      idempotencyKey,
      signal,
    });
  }

  async getAsset(assetId: string, signal?: AbortSignal) {
    return (
      await this.request("GET", `/v3/assets/${encodeURIComponent(assetId)}`, {
        schema: assetRecordSchema,
        signal,
      })
    ).data;
  }

  /** svc extension: what `composition` inside the asset declares (size, duration, variables). */
  async getAssetComposition(assetId: string, composition: string, signal?: AbortSignal) {
    const query = new URLSearchParams({ composition }).toString();
    return (
      await this.request(
        "GET",
        `/v3/svc/assets/${encodeURIComponent(assetId)}/composition?${query}`,
        { schema: assetCompositionSchema, signal },
      )
    ).data;
  }

  async completeAsset(assetId: string, signal?: AbortSignal) {
    return (
      await this.request("POST", `/v3/assets/${encodeURIComponent(assetId)}/complete`, {
        schema: completeAssetResponseSchema,
        // Completing is idempotent on the service, so it may be retried like a keyed POST.
        idempotent: true,
        signal,
      })
    ).data;
  }

  async submitRender(body: RenderRequest, idempotencyKey: string, signal?: AbortSignal) {
    return (
      await this.request("POST", "/v3/svc/renders", {
        schema: submitRenderResponseSchema,
        json: body,
        idempotencyKey,
        signal,
      })
    ).data;
  }

  /** Frames, credits and estimated time of a render, before anything is uploaded or charged. */
  async quoteRender(body: RenderQuoteRequest, signal?: AbortSignal): Promise<RenderQuote> {
    return (
      await this.request("POST", "/v3/svc/renders/quote", {
        schema: renderQuoteSchema,
        json: body,
        signal,
      })
    ).data;
  }

  async getRender(renderId: string, signal?: AbortSignal): Promise<RenderRecord> {
    return (
      await this.request("GET", `/v3/svc/renders/${encodeURIComponent(renderId)}`, {
        schema: renderRecordSchema,
        signal,
      })
    ).data;
  }

  async listRenders(
    query: { limit?: number; token?: string },
    signal?: AbortSignal,
  ): Promise<RenderList> {
    const searchParams: Record<string, string | number> = {};
    if (query.limit !== undefined) searchParams.limit = query.limit;
    if (query.token !== undefined) searchParams.token = query.token;
    // The list endpoint answers {data:[...], has_more, next_token}: parse the whole body.
    const response = await this.withRefresh(async () => {
      try {
        return await this.http(`${this.baseUrl}/v3/svc/renders`, {
          headers: this.credential ? { authorization: `Bearer ${this.credential}` } : {},
          searchParams,
          responseType: "json",
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        throw toClientError(error, this.baseUrl, signal);
      }
    });
    const parsed = renderListSchema.safeParse(response.body);
    if (!parsed.success) {
      throw new ClientError(
        "unexpected_response",
        "The service answered the render list with a body svc does not understand.",
        CHECK_SERVICE_VERSION,
      );
    }
    return parsed.data;
  }

  /** Stops a queued or rendering render (failed, `cancelled`, nothing charged); 409 once it ended. */
  async cancelRender(renderId: string, signal?: AbortSignal): Promise<RenderRecord> {
    return (
      await this.request("POST", `/v3/svc/renders/${encodeURIComponent(renderId)}/cancel`, {
        schema: renderRecordSchema,
        signal,
      })
    ).data;
  }

  async deleteRender(renderId: string, signal?: AbortSignal) {
    return (
      await this.request("DELETE", `/v3/svc/renders/${encodeURIComponent(renderId)}`, {
        schema: deleteRenderResponseSchema,
        signal,
      })
    ).data;
  }

  async me(signal?: AbortSignal): Promise<UserRecord> {
    return (await this.request("GET", "/v3/users/me", { schema: userRecordSchema, signal })).data;
  }
}

function retryDelay(retry: RetryObject, backoffMs: number): number {
  const { attemptCount, computedValue, error, retryOptions } = retry;
  if (attemptCount > retryOptions.limit) return 0;
  const step = clientRetryDelay(attemptCount, backoffMs);
  if (computedValue > 0) {
    // A 429 with Retry-After arrives here as that many milliseconds.
    return retry.retryAfter !== undefined ? computedValue : step;
  }
  // A keyed POST whose earlier attempt was cut off may find its first request still running:
  // the service answers 409 "in progress" until it finishes, after which it replays the answer.
  if (
    attemptCount > 1 &&
    error.response?.statusCode === 409 &&
    error.options.headers["idempotency-key"] !== undefined &&
    apiErrorCode(error.response.body) === "svc_idempotency_conflict"
  ) {
    return step;
  }
  return 0;
}

function apiErrorCode(body: unknown): string | undefined {
  const parsed = apiErrorEnvelopeSchema.safeParse(typeof body === "string" ? safeJson(body) : body);
  return parsed.success ? parsed.data.error.code : undefined;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Turns anything got throws into one ClientError with a hint. */
export function toClientError(error: unknown, baseUrl: string, signal?: AbortSignal): ClientError {
  if (error instanceof ClientError) return error;
  if (signal?.aborted) return interruptedError();
  if (error instanceof HTTPError) {
    const status = error.response.statusCode;
    const body = error.response.body;
    const parsed = apiErrorEnvelopeSchema.safeParse(
      typeof body === "string" || Buffer.isBuffer(body) ? safeJson(String(body)) : body,
    );
    if (parsed.success) {
      const { code, message, param } = parsed.data.error;
      return new ClientError(code, `${message} (${code}, HTTP ${status})`, HINTS[code], {
        status,
        ...(param ? { param } : {}),
        cause: error,
      });
    }
    return new ClientError(
      status === 401 ? "authentication_failed" : "http_error",
      `The service at ${baseUrl} answered HTTP ${status}.`,
      status === 401
        ? HINTS.authentication_failed
        : "Check that the service URL points at an svc render service.",
      { status, cause: error },
    );
  }
  if (error instanceof RequestError) {
    if (error.name === "TimeoutError") {
      return new ClientError(
        "timeout",
        `The render service at ${baseUrl} did not answer in time.`,
        "Check your connection and try again.",
        { cause: error },
      );
    }
    if (error.name === "AbortError" || error.code === "ERR_ABORTED") return interruptedError();
    return new ClientError(
      "network_error",
      `Cannot reach the render service at ${baseUrl} (${error.code ?? error.message}).`,
      "Check the service URL and your connection.",
      { cause: error },
    );
  }
  return new ClientError(
    "internal_error",
    scrubSecrets(error instanceof Error ? error.message : String(error)),
    "This looks like a bug in svc; please report it.",
  );
}
