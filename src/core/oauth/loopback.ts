// The loopback listener of browser sign-in (RFC 8252): a server on 127.0.0.1 (a free port) that
// waits for the one redirect carrying the authorization code, and answers the browser with a
// small page. The state is compared in constant time and a mismatch ends the sign-in (the answer
// is not for us).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { LOOPBACK_CALLBACK_PATH } from "../../shared/oauth";
import { sameSecret } from "../../node/index";
import { ClientError, interruptedError, registerSecret } from "../errors";
import { HINTS, LOGIN_TIMEOUT_MS } from "./protocol";

const CALLBACK_PAGE = (title: string, message: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title} · svc</title>
<style>body{font:16px/1.5 system-ui,sans-serif;background:#f4f5f7;margin:0}main{max-width:26rem;margin:15vh auto;background:#fff;border-radius:12px;padding:2rem;box-shadow:0 2px 12px rgba(0,0,0,.08)}</style>
</head><body><main><h1>${title}</h1><p>${message}</p></main></body></html>`;

export interface LoopbackListener {
  redirectUri: string;
  /** Resolves with the code once the browser comes back with the expected state. */
  code: Promise<string>;
  close(): void;
}

/** Listens on 127.0.0.1 (port 0) for the one redirect carrying the authorization code. */
export async function startLoopbackListener(
  expectedState: string,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<LoopbackListener> {
  let settle!: { resolve: (code: string) => void; reject: (error: Error) => void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  let done = false;
  const finish = (outcome: { code: string } | { error: ClientError }) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    if ("code" in outcome) settle.resolve(outcome.code);
    else settle.reject(outcome.error);
    // Let the page reach the browser before the sockets go.
    setImmediate(() => {
      server.close();
      server.closeAllConnections();
    });
  };
  const reply = (response: ServerResponse, status: number, title: string, message: string) => {
    response.writeHead(status, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
      "referrer-policy": "no-referrer",
      connection: "close",
    });
    response.end(CALLBACK_PAGE(title, message));
  };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (request.method !== "GET" || url.pathname !== LOOPBACK_CALLBACK_PATH || done) {
      response.writeHead(404, { connection: "close" }).end();
      return;
    }
    const state = url.searchParams.get("state") ?? "";
    if (!sameSecret(expectedState, state)) {
      reply(
        response,
        400,
        "Sign-in failed",
        "This answer does not belong to the sign-in that is waiting. Start the sign-in again from svc.",
      );
      finish({
        error: new ClientError(
          "oauth_state_mismatch",
          "The browser came back with a different state; the sign-in was refused.",
          "Start the sign-in again, and use the link it shows.",
        ),
      });
      return;
    }
    const error = url.searchParams.get("error");
    if (error) {
      reply(
        response,
        400,
        "Sign-in failed",
        "The sign-in was not completed. You can close this tab and return to svc.",
      );
      const description = url.searchParams.get("error_description") ?? error;
      finish({ error: new ClientError(error, `${description} (${error})`, HINTS[error]) });
      return;
    }
    const received = url.searchParams.get("code");
    if (!received) {
      reply(response, 400, "Sign-in failed", "The answer carried no code.");
      finish({
        error: new ClientError("invalid_request", "The browser came back without a code."),
      });
      return;
    }
    registerSecret(received);
    reply(
      response,
      200,
      "Signed in to svc",
      "You are signed in. You can close this tab and return to svc.",
    );
    finish({ code: received });
  });
  const onAbort = () => finish({ error: interruptedError() });
  const timer = setTimeout(
    () =>
      finish({
        error: new ClientError(
          "login_timeout",
          `No answer from the browser within ${Math.round((options.timeoutMs ?? LOGIN_TIMEOUT_MS) / 1000)} s.`,
          "Start the sign-in again; on a remote machine sign in with a device code.",
        ),
      }),
    options.timeoutMs ?? LOGIN_TIMEOUT_MS,
  );
  timer.unref();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}${LOOPBACK_CALLBACK_PATH}`,
    code,
    close: () => finish({ error: interruptedError() }),
  };
}
