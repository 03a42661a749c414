// `svc auth login`: sign in to the render service through the browser (the default: PKCE and a
// loopback listener), with a code entered in any browser (`--device`), or with an API key
// (`--api-key`: hidden prompt on a terminal, or the key piped on stdin; checked against the
// service before it is stored, and never printed). Prompts and the sign-in URL go to stderr;
// results (and --json) to stdout.
import type { Command } from "commander";
import { ApiClient } from "../../core/index";
import { withApiKey } from "../../core/index";
import { ClientError, registerSecret } from "../../core/index";
import {
  LOGIN_TIMEOUT_MS,
  loginWithBrowser,
  loginWithDevice,
  openSystemBrowser,
  saveSignIn,
} from "../../core/index";
import type { UserRecord } from "../../shared/api";
import type { TokenResponse } from "../../shared/oauth";
import { printJson, runAction } from "../command";
import { UsageError } from "../errors";
import { promptHidden, readPipedInput, type CliIo } from "../io";
import { VERSION } from "../version";
import { cliCredentialBackend, withCloudContext } from "../cloud/context";
import { deviceLoginRefusal, remoteTerminalReason, terminalOf } from "./terminal";

export interface LoginOptions {
  method: "browser" | "device" | "api-key";
  json?: boolean;
  signal?: AbortSignal;
}

export interface LoginResult {
  signed_in: true;
  method?: "browser" | "device";
  email: string;
  file: string;
}

const USER_AGENT = `svc-cli/${VERSION}`;

function printSignedIn(
  io: CliIo,
  json: boolean,
  user: UserRecord,
  location: string,
  method: "browser" | "device",
): LoginResult {
  const result = { signed_in: true, method, email: user.email, file: location } as const;
  if (json) {
    printJson(io, result);
  } else {
    io.stdout.write(`Signed in as ${user.email}; the credential is stored in ${location}.\n`);
  }
  if (io.env.SVC_API_KEY?.trim() || io.env.SVC_ALIAS_API_KEY?.trim()) {
    io.stderr.write(
      "note: SVC_API_KEY / SVC_ALIAS_API_KEY is set and takes precedence over the stored sign-in.\n",
    );
  }
  return result;
}

/** Runs one sign-in flow against the service, stores its tokens and says who is signed in. */
async function signInWith(
  io: CliIo,
  options: LoginOptions & { method: "browser" | "device" },
  flow: (baseUrl: string, signal: AbortSignal | undefined) => Promise<TokenResponse>,
): Promise<LoginResult> {
  const { user, location } = await withCloudContext(
    io,
    async ({ config }) => {
      const backend = cliCredentialBackend(io, config);
      const tokens = await flow(config.apiUrl, options.signal);
      const saved = await saveSignIn(backend, config.apiUrl, tokens, { userAgent: USER_AGENT });
      return { user: saved, location: backend.location };
    },
    { requireCredential: false },
  );
  return printSignedIn(io, Boolean(options.json), user, location, options.method);
}

/** `svc auth login`: PKCE through the system browser and a loopback listener (120 s). */
async function loginThroughBrowser(io: CliIo, options: LoginOptions): Promise<LoginResult> {
  const remote = remoteTerminalReason(io.env, terminalOf(io));
  if (remote) {
    throw new UsageError(
      `Browser sign-in needs a browser on this computer, and ${remote}.`,
      "Use `svc auth login --device` (enter a code in any browser), or `svc auth login --api-key`.",
    );
  }
  return signInWith(io, { ...options, method: "browser" }, (baseUrl, signal) =>
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
async function loginThroughDevice(io: CliIo, options: LoginOptions): Promise<LoginResult> {
  const refusal = deviceLoginRefusal(io.env, terminalOf(io));
  if (refusal) {
    throw new UsageError(
      `Device sign-in needs a person at an interactive terminal, and ${refusal}.`,
      "In CI or scripts use an API key (SVC_API_KEY, or `svc auth login --api-key` with the key on stdin).",
    );
  }
  return signInWith(io, { ...options, method: "device" }, (baseUrl, signal) =>
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

async function readApiKey(io: CliIo): Promise<string> {
  const key = (
    io.stdin.isTTY
      ? await promptHidden(io, "API key: ", () => new ClientError("interrupted", "Interrupted."))
      : await readPipedInput(io)
  ).trim();
  if (!key) {
    throw new UsageError(
      "No API key given.",
      'Paste the key at the prompt, or pipe it: `printf %s "$KEY" | svc auth login --api-key`.',
    );
  }
  if (/\s/.test(key)) throw new UsageError("The API key must be one word without spaces.");
  registerSecret(key);
  return key;
}

async function loginWithApiKey(io: CliIo, json: boolean): Promise<LoginResult> {
  const key = await readApiKey(io);
  const { user, file } = await withCloudContext(
    io,
    async ({ config }) => {
      const client = new ApiClient({
        baseUrl: config.apiUrl,
        credential: key,
        userAgent: USER_AGENT,
      });
      let user: UserRecord;
      try {
        user = await client.me();
      } catch (error) {
        if (error instanceof ClientError && error.status === 401) {
          throw new ClientError(
            "authentication_failed",
            `The render service at ${config.apiUrl} rejected this API key; nothing was stored.`,
            "Check the key (`svc server keys create --user EMAIL` makes one for a local service) and run `svc auth login --api-key` again.",
          );
        }
        throw error;
      }
      // The chosen store: SVC_CREDENTIAL_STORE=keychain puts the key in the OS keychain.
      const backend = cliCredentialBackend(io, config);
      await backend.update(withApiKey(key, { email: user.email, username: user.username }));
      return { user, file: backend.location };
    },
    { requireCredential: false },
  );
  const result = { signed_in: true, email: user.email, file } as const;
  if (json) {
    printJson(io, result);
  } else {
    io.stdout.write(`Signed in as ${user.email}; the key is stored in ${file}.\n`);
  }
  if (io.env.SVC_API_KEY?.trim() || io.env.SVC_ALIAS_API_KEY?.trim()) {
    io.stderr.write(
      "note: SVC_API_KEY / SVC_ALIAS_API_KEY is set and takes precedence over the stored key.\n",
    );
  }
  return result;
}

export async function runLogin(options: LoginOptions, io: CliIo): Promise<LoginResult> {
  if (options.method === "device") return loginThroughDevice(io, options);
  if (options.method === "api-key") return loginWithApiKey(io, Boolean(options.json));
  return loginThroughBrowser(io, options);
}

export function registerAuthLoginCommand(auth: Command, io: CliIo): void {
  auth
    .command("login")
    .description("store a credential for the render service")
    .option("--device", "sign in by entering a code in any browser (for SSH sessions)")
    .option("--api-key", "sign in with an API key (hidden prompt, or piped on stdin)")
    .option("--json", "print the result as JSON")
    .action((flags: { apiKey?: boolean; device?: boolean; json?: boolean }) =>
      runAction(io, flags.json, (signal) => {
        if (flags.apiKey && flags.device) {
          throw new UsageError("Choose one of --device and --api-key.");
        }
        const method = flags.device ? "device" : flags.apiKey ? "api-key" : "browser";
        return runLogin({ method, json: flags.json, signal }, io);
      }),
    );
}
