// Browser sign-in: PKCE S256 through the system browser and the loopback listener (RFC 8252),
// within LOGIN_TIMEOUT_MS. Opening a browser is injected (openSystemBrowser is the default the
// CLI and the app pass); whether this terminal can show one is the CLI's question
// (src/cli/auth/terminal.ts).
import { startDetached, systemOpenCommand } from "../../node/index";
import { randomBytes } from "node:crypto";
import { type TokenResponse } from "../../shared/oauth";
import { LOGIN_TIMEOUT_MS, authorizeUrl, createPkcePair, exchangeCode } from "./protocol";
import { startLoopbackListener } from "./loopback";

export interface BrowserLoginOptions {
  baseUrl: string;
  /** Opens the URL in a browser; false when none could be opened (the URL is then printed). */
  openUrl: (url: string) => Promise<boolean>;
  /** Told the URL to show, and whether a browser was opened. */
  onAuthorizeUrl: (url: string, opened: boolean) => void;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export async function loginWithBrowser(options: BrowserLoginOptions): Promise<TokenResponse> {
  const { verifier, challenge } = createPkcePair();
  const state = randomBytes(16).toString("base64url");
  const listener = await startLoopbackListener(state, {
    timeoutMs: options.timeoutMs ?? LOGIN_TIMEOUT_MS,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const url = authorizeUrl(options.baseUrl, {
    redirectUri: listener.redirectUri,
    challenge,
    state,
  });
  const opened = await options.openUrl(url).catch(() => false);
  options.onAuthorizeUrl(url, opened);
  const code = await listener.code;
  return exchangeCode(
    options.baseUrl,
    { code, redirectUri: listener.redirectUri, verifier },
    options.signal,
  );
}

/**
 * Opens `url` in the system browser. `BROWSER=none` (or an SSH session without a display)
 * opens nothing; `BROWSER=cmd` runs that command. Resolves false when nothing could be opened.
 */
export function openSystemBrowser(
  url: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  if (env.BROWSER !== undefined) {
    if (env.BROWSER === "" || env.BROWSER === "none") return Promise.resolve(false);
    return startDetached(env.BROWSER, [url]);
  }
  const command = systemOpenCommand();
  if (command === "xdg-open" && !env.DISPLAY && !env.WAYLAND_DISPLAY) return Promise.resolve(false);
  return startDetached(command, [url]);
}
