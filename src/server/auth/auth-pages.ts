// The pages a person sees while signing in (SPEC.md section 5): sign-in, consent for
// `GET /oauth/authorize`, and the `/device` page where a signed-in person enters a device code.
// Browser sessions are a random cookie stored hashed (12 h). Every form carries a CSRF token
// that must equal the `svc_csrf` cookie (double submit; the cookie is SameSite=Strict and
// HttpOnly). Pages are no-store, unframeable, script-free and send no Referer.
import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { sameSecret } from "../../node/index";
import { OAUTH_PATHS } from "../../shared/oauth";
import type { User } from "./accounts";
import {
  consentPage,
  deviceEntryPage,
  messagePage,
  oauthErrorPage,
  signInPage,
} from "./auth-pages-html";
import type { ServiceContext } from "../context";
import {
  formatUserCode,
  hashSecret,
  validateAuthorizeRequest,
  type AuthorizeValidation,
} from "./authorize-request";
import type { AuthorizationServer } from "./grants";
import { addFormParser } from "./oauth-routes";
import { LoginThrottle, checkUserPassword } from "./passwords";
import { findSessionUser, insertSession } from "./session-repository";

const SESSION_COOKIE = "svc_session";
const CSRF_COOKIE = "svc_csrf";
const SESSION_TTL_MS = 12 * 3600_000;

/** The authorize parameters the consent form carries back. */
const AUTHORIZE_FIELDS = [
  "response_type",
  "client_id",
  "redirect_uri",
  "code_challenge",
  "code_challenge_method",
  "scope",
  "state",
] as const;

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  pragma: "no-cache",
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

type Form = Record<string, unknown>;

function field(form: Form, name: string): string {
  const value = form[name];
  return typeof value === "string" ? value : "";
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const index = part.indexOf("=");
    if (index <= 0) continue;
    const name = part.slice(0, index).trim();
    const value = part.slice(index + 1).trim();
    if (!(name in cookies)) {
      try {
        cookies[name] = decodeURIComponent(value);
      } catch {
        cookies[name] = value;
      }
    }
  }
  return cookies;
}

/** Only pages of this service may be the target after signing in. */
function safeNext(next: string): string {
  if (next.startsWith(`${OAUTH_PATHS.authorize}?`)) return next;
  if (next === OAUTH_PATHS.device || next.startsWith(`${OAUTH_PATHS.device}?`)) return next;
  return OAUTH_PATHS.device;
}

export function registerAuthPages(
  app: FastifyInstance,
  ctx: ServiceContext,
  oauth: AuthorizationServer,
): void {
  const throttle = new LoginThrottle(ctx.db, 5, 15 * 60_000, ctx.now);
  const secureCookies = (process.env.SVC_SERVER_PUBLIC_URL ?? "").startsWith("https:");
  const cookie = (
    name: string,
    value: string,
    options: { maxAgeSeconds: number; sameSite: string },
  ) =>
    `${name}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=${options.sameSite}; Max-Age=${options.maxAgeSeconds}${secureCookies ? "; Secure" : ""}`;

  async function sessionUser(request: FastifyRequest): Promise<User | undefined> {
    const token = parseCookies(request.headers.cookie)[SESSION_COOKIE];
    if (!token) return undefined;
    const row = await findSessionUser(ctx.db, hashSecret(token));
    if (!row || row.expires_ms <= ctx.now()) return undefined;
    const { expires_ms: _expires, ...user } = row;
    return user;
  }

  async function startSession(reply: FastifyReply, userId: string): Promise<void> {
    const token = randomBytes(32).toString("base64url");
    const now = ctx.now();
    await insertSession(
      ctx.db,
      {
        session_hash: hashSecret(token),
        user_id: userId,
        created_ms: now,
        expires_ms: now + SESSION_TTL_MS,
      },
      now,
    );
    appendCookie(
      reply,
      cookie(SESSION_COOKIE, token, { maxAgeSeconds: SESSION_TTL_MS / 1000, sameSite: "Lax" }),
    );
  }

  function appendCookie(reply: FastifyReply, value: string): void {
    const existing = reply.getHeader("set-cookie");
    const list =
      existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
    reply.header("set-cookie", [...list, value]);
  }

  /** The CSRF token for this browser, set as a cookie when it has none yet. */
  function csrfToken(request: FastifyRequest, reply: FastifyReply): string {
    const existing = parseCookies(request.headers.cookie)[CSRF_COOKIE];
    if (existing && /^[A-Za-z0-9_-]{32,}$/.test(existing)) return existing;
    const token = randomBytes(24).toString("base64url");
    appendCookie(reply, cookie(CSRF_COOKIE, token, { maxAgeSeconds: 86_400, sameSite: "Strict" }));
    return token;
  }

  function csrfValid(request: FastifyRequest, form: Form): boolean {
    const cookieToken = parseCookies(request.headers.cookie)[CSRF_COOKIE] ?? "";
    return sameSecret(cookieToken, field(form, "csrf"));
  }

  function send(reply: FastifyReply, status: number, html: string): FastifyReply {
    return reply.code(status).headers(PAGE_HEADERS).send(html);
  }

  /** 429 with Retry-After, the page saying in how many minutes to try again. */
  function sendThrottled(
    reply: FastifyReply,
    waitSeconds: number,
    page: (tryAgain: string) => string,
  ): FastifyReply {
    reply.header("retry-after", String(waitSeconds));
    return send(reply, 429, page(`Try again in ${Math.ceil(waitSeconds / 60)} minute(s).`));
  }

  function redirect(reply: FastifyReply, location: string): FastifyReply {
    return reply
      .code(303)
      .headers({ ...PAGE_HEADERS, location })
      .send();
  }

  /** An authorize request that failed its checks: an error page, or back to the client. */
  function refuseAuthorize(
    reply: FastifyReply,
    validation: Exclude<AuthorizeValidation, { kind: "ok" }>,
  ): FastifyReply {
    if (validation.kind === "show_error") {
      return send(reply, 400, oauthErrorPage(validation.error.code, validation.error.message));
    }
    return redirectToClient(reply, validation.redirectUri, {
      error: validation.error.code,
      error_description: validation.error.message,
      state: validation.state,
    });
  }

  function redirectToClient(
    reply: FastifyReply,
    redirectUri: string,
    params: Record<string, string | undefined>,
  ): FastifyReply {
    const url = new URL(redirectUri);
    for (const [name, value] of Object.entries(params)) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    return redirect(reply, url.toString());
  }

  function refusedCsrf(reply: FastifyReply): FastifyReply {
    return send(
      reply,
      403,
      messagePage(
        "Form expired",
        "This form is no longer valid (missing or stale security token). Go back, reload the page and try again.",
        "error",
      ),
    );
  }

  void app.register(async (pages) => {
    addFormParser(pages);
    pages.setErrorHandler((error, request, reply) => {
      const status = (error as { statusCode?: number }).statusCode ?? 500;
      if (status >= 500) request.log.error({ err: error }, "sign-in page failed");
      return send(
        reply,
        status >= 400 && status < 500 ? status : 500,
        messagePage(
          "Something went wrong",
          status >= 500
            ? "The service hit an internal error; try again."
            : "The request was not understood.",
          "error",
        ),
      );
    });

    pages.get(OAUTH_PATHS.authorize, async (request, reply) => {
      const query = request.query as Form;
      const validation = validateAuthorizeRequest(query);
      if (validation.kind !== "ok") return refuseAuthorize(reply, validation);
      const csrf = csrfToken(request, reply);
      const user = await sessionUser(request);
      if (!user) {
        return send(reply, 200, signInPage({ csrf, next: request.url }));
      }
      const fields: Record<string, string | undefined> = {};
      for (const name of AUTHORIZE_FIELDS) {
        const value = query[name];
        if (typeof value === "string") fields[name] = value;
      }
      return send(
        reply,
        200,
        consentPage({
          csrf,
          email: user.email,
          clientId: validation.request.clientId,
          scope: validation.request.scope,
          fields,
          action: OAUTH_PATHS.authorize,
        }),
      );
    });

    pages.post(OAUTH_PATHS.authorize, async (request, reply) => {
      const form = (request.body ?? {}) as Form;
      if (!csrfValid(request, form)) return refusedCsrf(reply);
      const validation = validateAuthorizeRequest(form);
      if (validation.kind !== "ok") return refuseAuthorize(reply, validation);
      const { request: authorization } = validation;
      const user = await sessionUser(request);
      if (!user) {
        const query = new URLSearchParams();
        for (const name of AUTHORIZE_FIELDS) {
          const value = field(form, name);
          if (value) query.set(name, value);
        }
        return redirect(reply, `${OAUTH_PATHS.authorize}?${query.toString()}`);
      }
      if (field(form, "decision") !== "approve") {
        return redirectToClient(reply, authorization.redirectUri, {
          error: "access_denied",
          error_description: "the user denied the request",
          state: authorization.state,
        });
      }
      const code = await oauth.issueCode(user.id, authorization);
      return redirectToClient(reply, authorization.redirectUri, {
        code,
        state: authorization.state,
      });
    });

    pages.post("/oauth/signin", async (request, reply) => {
      const form = (request.body ?? {}) as Form;
      if (!csrfValid(request, form)) return refusedCsrf(reply);
      const next = safeNext(field(form, "next"));
      const email = field(form, "email").trim().slice(0, 320);
      const password = field(form, "password");
      const csrf = csrfToken(request, reply);
      const wait = await throttle.retryAfterSeconds(email, request.ip);
      if (wait > 0)
        return sendThrottled(reply, wait, (tryAgain) =>
          signInPage({ csrf, next, email, error: `Too many failed sign-ins. ${tryAgain}` }),
        );
      const user = email && password ? await checkUserPassword(ctx.db, email, password) : undefined;
      if (!user) {
        await throttle.recordFailure(email, request.ip);
        return send(
          reply,
          401,
          signInPage({ csrf, next, email, error: "The email or password is not right." }),
        );
      }
      await throttle.recordSuccess(email);
      await startSession(reply, user.id);
      return redirect(reply, next);
    });

    pages.get(OAUTH_PATHS.device, async (request, reply) => {
      const typed = field(request.query as Form, "user_code").slice(0, 32);
      const csrf = csrfToken(request, reply);
      const user = await sessionUser(request);
      if (!user) {
        const next = typed
          ? `${OAUTH_PATHS.device}?user_code=${encodeURIComponent(typed)}`
          : OAUTH_PATHS.device;
        return send(reply, 200, signInPage({ csrf, next }));
      }
      return send(reply, 200, deviceEntryPage({ csrf, email: user.email, userCode: typed }));
    });

    pages.post(OAUTH_PATHS.device, async (request, reply) => {
      const form = (request.body ?? {}) as Form;
      if (!csrfValid(request, form)) return refusedCsrf(reply);
      const csrf = csrfToken(request, reply);
      const user = await sessionUser(request);
      if (!user) return redirect(reply, OAUTH_PATHS.device);
      const typed = field(form, "user_code").slice(0, 32);
      // Guessing codes counts against the same throttle as guessing passwords.
      const wait = await throttle.retryAfterSeconds(`device:${user.id}`, request.ip);
      if (wait > 0)
        return sendThrottled(reply, wait, (tryAgain) =>
          deviceEntryPage({
            csrf,
            email: user.email,
            userCode: typed,
            error: `Too many wrong codes. ${tryAgain}`,
          }),
        );
      const pending = await oauth.findPendingDeviceCode(typed);
      if (!pending) {
        await throttle.recordFailure(`device:${user.id}`, request.ip);
        return send(
          reply,
          400,
          deviceEntryPage({
            csrf,
            email: user.email,
            userCode: typed,
            error: "That code is not right or has expired. Check the code in your terminal.",
          }),
        );
      }
      return send(
        reply,
        200,
        consentPage({
          csrf,
          email: user.email,
          clientId: pending.clientId,
          scope: pending.scope,
          fields: { user_code: formatUserCode(pending.userCode) },
          action: "/device/decision",
        }),
      );
    });

    pages.post("/device/decision", async (request, reply) => {
      const form = (request.body ?? {}) as Form;
      if (!csrfValid(request, form)) return refusedCsrf(reply);
      const user = await sessionUser(request);
      if (!user) return redirect(reply, OAUTH_PATHS.device);
      const approve = field(form, "decision") === "approve";
      const decided = await oauth.decideDeviceCode(field(form, "user_code"), user.id, approve);
      if (!decided) {
        return send(
          reply,
          400,
          messagePage(
            "Code expired",
            "That code is no longer waiting for approval. Start the sign-in again in your terminal.",
            "error",
          ),
        );
      }
      return send(
        reply,
        200,
        approve
          ? messagePage(
              "Device connected",
              "You are signed in. Return to svc (your terminal or the app); you can close this page.",
            )
          : messagePage("Request denied", "The device was not signed in. You can close this page."),
      );
    });
  });
}
