// Every refusal the template answers, as a value with a stable `code`, an HTTP status (mapped
// here, once) and a message that says what is wrong and how to fix it in the words of the request
// body. The body is `{error: {code, message, param?, issues?}}`. (A render that fails is not a
// refusal: it is a job result, `{status: "failed", error: {code, message}}`; see jobs.ts.)

export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_parameter: 400,
  invalid_composition: 400,
  unsupported_media_type: 415,
  body_too_large: 413,
  composition_not_found: 422,
  invalid_variables: 422,
  image_not_allowed: 422,
  authentication_required: 401,
  invalid_token: 401,
  host_not_allowed: 403,
  too_many_renders: 429,
  render_not_found: 404,
  not_found: 404,
  internal_error: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class TemplateError extends Error {
  override readonly name = "TemplateError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: { param?: string; issues?: unknown[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  toJSON(): { error: Record<string, unknown> } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.extra.param !== undefined ? { param: this.extra.param } : {}),
        ...(this.extra.issues !== undefined ? { issues: this.extra.issues } : {}),
      },
    };
  }
}
