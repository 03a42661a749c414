// The OAuth parts of `svc auth`: `login` through the browser (default) or `--device`,
// `refresh`, and the revoking half of `logout`. Thin: check the terminal, call src/core/oauth,
// print. Prompts and the sign-in URL go to stderr; results (and --json) to stdout.
import {
  LOGIN_TIMEOUT_MS,
  OAuthSession,
  deviceLoginRefusal,
  loginWithBrowser,
  loginWithDevice,
  openSystemBrowser,
  remoteTerminalReason,
  revokeToken,
  saveSignIn,
  signOut,
  type SignOutResult,
} from "../core/oauth";
import { ClientError } from "../core/errors";
import { loadClientConfig } from "../core/config";
import type { UserRecord } from "../shared/api";
import type { TokenResponse } from "../shared/oauth";
import { interruptSignal, withCloudContext } from "./cloud-context";
import { cliCredentialBackend } from "./cloud-context";
import { UsageError } from "./errors";
import type { CliIo } from "./io";
import { VERSION } from "./version";

const USER_AGENT = `svc-cli/${VERSION}`;

function terminal(io: CliIo): { stdin: boolean; stdout: boolean } {
  return { stdin: Boolean(io.stdin.isTTY), stdout: Boolean(io.stdout.isTTY) };
}

function printSignedIn(
  io: CliIo,
  json: boolean,
  user: UserRecord,
  location: string,
  method: string,
): void {
  if (json) {
    io.stdout.write(
      `${JSON.stringify({ signed_in: true, method, email: user.email, file: location }, null, 2)}\n`,
    );
  } else {
    io.stdout.write(`Signed in as ${user.email}; the credential is stored in ${location}.\n`);
  }
  if (io.env.SVC_API_KEY?.trim() || io.env.SVC_ALIAS_API_KEY?.trim()) {
    io.stderr.write(
      "note: SVC_API_KEY / SVC_ALIAS_API_KEY is set and takes precedence over the stored sign-in.\n",
    );
  }
}

/** Runs one sign-in flow against the service, stores its tokens and says who is signed in. */
async function signInWith(
  io: CliIo,
  json: boolean,
  method: "browser" | "device",
  flow: (baseUrl: string, signal: AbortSignal) => Promise<TokenResponse>,
): Promise<void> {
  const interrupt = interruptSignal();
  try {
    const { user, location } = await withCloudContext(
      io,
      async ({ config }) => {
        const backend = cliCredentialBackend(io, config);
        const tokens = await flow(config.apiUrl, interrupt.signal);
        const saved = await saveSignIn(backend, config.apiUrl, tokens, { userAgent: USER_AGENT });
        return { user: saved, location: backend.location };
      },
      { requireCredential: false },
    );
    printSignedIn(io, json, user, location, method);
  } finally {
    interrupt.dispose();
  }
}

/** `svc auth login`: PKCE through the system browser and a loopback listener (120 s). */
export async function loginThroughBrowser(io: CliIo, json: boolean): Promise<void> {
  const remote = remoteTerminalReason(io.env, terminal(io));
  if (remote) {
    throw new UsageError(
      `Browser sign-in needs a browser on this computer, and ${remote}.`,
      "Use `svc auth login --device` (enter a code in any browser), or `svc auth login --api-key`.",
    );
  }
  await signInWith(io, json, "browser", (baseUrl, signal) =>
    loginWithBrowser({
      baseUrl,
      openUrl: (url) => openSystemBrowser(url, io.env),
      onAuthorizeUrl: (url, opened) => {
        io.stderr.write(
          opened
            ? `Opened your browser to sign in. If it did not open, visit:\n\n  ${url}\n\n`
            : `Open this URL in a browser on this computer to sign in:\n\n  ${url}\n\n`,
        );
        io.stderr.write(
          `Waiting up to ${LOGIN_TIMEOUT_MS / 1000} s for the browser... (Ctrl+C to stop)\n`,
        );
      },
      signal,
    }),
  );
}

/** `svc auth login --device`: RFC 8628 — show a code, poll until it is approved. */
export async function loginThroughDevice(io: CliIo, json: boolean): Promise<void> {
  const refusal = deviceLoginRefusal(io.env, terminal(io));
  if (refusal) {
    throw new UsageError(
      `Device sign-in needs a person at an interactive terminal, and ${refusal}.`,
      "In CI or scripts use an API key (SVC_API_KEY, or `svc auth login --api-key` with the key on stdin).",
    );
  }
  await signInWith(io, json, "device", (baseUrl, signal) =>
    loginWithDevice({
      baseUrl,
      onCode: (authorization) => {
        io.stderr.write(
          [
            `To sign in, open ${authorization.verification_uri} in any browser and enter the code:`,
            "",
            `    ${authorization.user_code}`,
            "",
            ...(authorization.verification_uri_complete
              ? [`(or open ${authorization.verification_uri_complete})`]
              : []),
            `Waiting for approval; the code expires in ${Math.round(authorization.expires_in / 60)} min. (Ctrl+C to stop)`,
            "",
          ].join("\n"),
        );
      },
      signal,
    }),
  );
}

/** `svc auth refresh`: exchanges the stored refresh token for a new pair now. */
export async function refreshSignIn(io: CliIo, json: boolean): Promise<void> {
  const result = await withCloudContext(
    io,
    async ({ config }) => {
      const backend = cliCredentialBackend(io, config);
      const stored = await backend.read();
      if (!stored.oauth?.refresh_token) {
        throw new ClientError(
          "not_signed_in",
          "There is no browser or device sign-in to refresh.",
          "Run `svc auth login` (API keys do not expire and need no refresh).",
        );
      }
      const session = new OAuthSession(backend, config.apiUrl);
      await session.forceRefresh(stored.oauth.access_token);
      const expiresAt = (await backend.read()).oauth?.expires_at ?? 0;
      return { expiresAt, location: backend.location };
    },
    { requireCredential: false },
  );
  const when = new Date(result.expiresAt * 1000).toISOString();
  if (json) {
    io.stdout.write(
      `${JSON.stringify({ refreshed: true, expires_at: result.expiresAt, file: result.location }, null, 2)}\n`,
    );
  } else {
    io.stdout.write(`Refreshed the sign-in; the new access token is valid until ${when}.\n`);
  }
}

/**
 * `svc auth logout`: revokes the OAuth sign-in on the service (starting the local one when it is
 * the default and not running), then removes it from the store (src/core/oauth signOut).
 */
export async function signOutHere(
  io: CliIo,
  options: { keepApiKey: boolean },
): Promise<SignOutResult> {
  const backend = cliCredentialBackend(io, loadClientConfig(io.env));
  return signOut(backend, {
    keepApiKey: options.keepApiKey,
    revoke: (refreshToken) =>
      withCloudContext(io, async ({ config }) => revokeToken(config.apiUrl, refreshToken), {
        requireCredential: false,
      }),
  });
}
