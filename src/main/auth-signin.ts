// Browser and device-code sign-in for the desktop app (SPEC.md section 7), on the same core flows
// as `svc auth login` (src/core/oauth.ts): PKCE with the loopback listener in this process, or
// the device grant. A sign-in waits minutes for the person, so `auth.login` answers as soon as
// there is something to show (the page URL, or the code and where to enter it), and the outcome
// is announced through `onSettled` (the app sends an `auth` event). One sign-in at a time: a new
// one, or `cancel`, stops the one waiting. The browser is opened by the host (Electron's
// shell, or the system opener in web mode); when it cannot be, the UI shows the URL as a link.
import type { IpcError, PendingSignIn } from "../shared/ipc";
import {
  LOGIN_TIMEOUT_MS,
  loginWithBrowser,
  loginWithDevice,
  saveSignIn,
  type CredentialBackend,
} from "../core/index";
import type { TokenResponse } from "../shared/oauth";
import { toIpcError } from "./ipc-errors";

export interface SignInTarget {
  baseUrl: string;
  backend: CredentialBackend;
}

export interface DesktopSignInOptions {
  /** The service and credential store to sign in to (refuses when there is none to choose). */
  target: () => Promise<SignInTarget>;
  /** Opens the sign-in page in the system browser; false when it could not. */
  openUrl: (url: string) => Promise<boolean>;
  /** A sign-in that had shown its URL or code finished, failed or timed out. */
  onSettled: () => void;
  userAgent?: string;
  browserTimeoutMs?: number;
  now?: () => number;
}

interface Attempt {
  controller: AbortController;
  pending: PendingSignIn | undefined;
}

export class DesktopSignIn {
  private current: Attempt | undefined;
  private lastError: IpcError | undefined;

  constructor(private readonly options: DesktopSignInOptions) {}

  /** What `auth.status` adds: the sign-in waiting for the person, or why the last one failed. */
  view(): { signIn: PendingSignIn | undefined; signInError: IpcError | undefined } {
    return { signIn: this.current?.pending, signInError: this.lastError };
  }

  /**
   * Starts a sign-in and resolves once its URL or code is known (see `view`). A failure before
   * that (service unreachable, refused) rejects; later ones are kept in `view().signInError`.
   */
  async start(method: PendingSignIn["method"]): Promise<void> {
    this.cancel();
    this.lastError = undefined;
    const attempt: Attempt = { controller: new AbortController(), pending: undefined };
    this.current = attempt;
    let shown!: () => void;
    const ready = new Promise<void>((resolve) => (shown = resolve));
    const show = (pending: PendingSignIn) => {
      attempt.pending = pending;
      shown();
    };
    const flow = this.run(method, attempt.controller.signal, show);
    flow.then(
      () => this.settle(attempt, undefined),
      (error: unknown) => this.settle(attempt, error),
    );
    await Promise.race([ready, flow]);
  }

  /** Stops the waiting sign-in, if any; true when there was one. */
  cancel(): boolean {
    const attempt = this.current;
    if (!attempt) return false;
    this.current = undefined;
    attempt.controller.abort();
    return true;
  }

  private async run(
    method: PendingSignIn["method"],
    signal: AbortSignal,
    show: (pending: PendingSignIn) => void,
  ): Promise<void> {
    const now = this.options.now ?? Date.now;
    const { baseUrl, backend } = await this.options.target();
    let tokens: TokenResponse;
    if (method === "browser") {
      const timeoutMs = this.options.browserTimeoutMs ?? LOGIN_TIMEOUT_MS;
      tokens = await loginWithBrowser({
        baseUrl,
        openUrl: this.options.openUrl,
        onAuthorizeUrl: (url, opened) =>
          show({
            method,
            url,
            browserOpened: opened,
            userCode: undefined,
            urlWithCode: undefined,
            expiresAt: now() + timeoutMs,
          }),
        timeoutMs,
        signal,
      });
    } else {
      tokens = await loginWithDevice({
        baseUrl,
        onCode: (authorization) =>
          show({
            method,
            url: authorization.verification_uri,
            browserOpened: false,
            userCode: authorization.user_code,
            urlWithCode: authorization.verification_uri_complete,
            expiresAt: now() + authorization.expires_in * 1000,
          }),
        signal,
      });
    }
    await saveSignIn(backend, baseUrl, tokens, {
      ...(this.options.userAgent ? { userAgent: this.options.userAgent } : {}),
    });
  }

  private settle(attempt: Attempt, error: unknown): void {
    // Replaced by a newer sign-in, or cancelled: nothing to announce.
    if (this.current !== attempt) return;
    this.current = undefined;
    // Failed before showing anything: `start` rejected with this error already.
    if (!attempt.pending) return;
    if (error !== undefined) {
      const failure = toIpcError(error);
      const hint = APP_HINTS[failure.code];
      this.lastError = hint ? { ...failure, hint } : failure;
    }
    this.options.onSettled();
  }
}

/** The core's hints name `svc auth login`; in the app the way to retry is a button. */
const APP_HINTS: Record<string, string> = {
  access_denied: "Access was denied in the browser. Sign in again to retry.",
  expired_token: "The code expired before it was approved. Sign in again for a new code.",
  login_timeout: "Nothing came back from the browser in time. Sign in again to retry.",
};
