// `svc auth login|status|refresh|logout`. Sign-in methods are separate functions behind
// `login`'s flags: `--api-key` (hidden prompt on a terminal, or the key piped on stdin) is here;
// browser (the default) and `--device` sign-in, `refresh` and the revoking part of `logout` are
// in auth-oauth.ts. The key is checked against the service before it is stored, and it is never
// printed.
import type { Command } from "commander";
import { ApiClient } from "../core/api-client";
import { withApiKey, type ResolvedCredential } from "../core/credentials";
import { ClientError, registerSecret } from "../core/errors";
import type { UserRecord } from "../shared/api";
import { notSignedInError, withCloudContext } from "./cloud-context";
import { cliCredentialBackend } from "./cloud-context";
import { reportError, reportParseErrorsAsJson, UsageError } from "./errors";
import { VERSION } from "./version";
import { loginThroughBrowser, loginThroughDevice, refreshSignIn, signOutHere } from "./auth-oauth";
import { promptHidden, readPipedInput, type CliIo } from "./io";

const SOURCE_TEXT: Record<ResolvedCredential["source"], string> = {
  "env:SVC_API_KEY": "environment variable SVC_API_KEY",
  "env:SVC_ALIAS_API_KEY": "environment variable SVC_ALIAS_API_KEY",
  "credentials-file": "credentials file",
  keychain: "the OS keychain",
  "local-service": "the local service's key file",
};

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

async function loginWithApiKey(io: CliIo, json: boolean): Promise<void> {
  const key = await readApiKey(io);
  const { user, file } = await withCloudContext(
    io,
    async ({ config }) => {
      const client = new ApiClient({
        baseUrl: config.apiUrl,
        credential: key,
        userAgent: `svc-cli/${VERSION}`,
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
  if (json) {
    io.stdout.write(`${JSON.stringify({ signed_in: true, email: user.email, file }, null, 2)}\n`);
  } else {
    io.stdout.write(`Signed in as ${user.email}; the key is stored in ${file}.\n`);
  }
  if (io.env.SVC_API_KEY?.trim() || io.env.SVC_ALIAS_API_KEY?.trim()) {
    io.stderr.write(
      "note: SVC_API_KEY / SVC_ALIAS_API_KEY is set and takes precedence over the stored key.\n",
    );
  }
}

export function registerAuthCommand(program: Command, io: CliIo): void {
  const auth = reportParseErrorsAsJson(program.command("auth"), io).description(
    "sign in to the render service",
  );

  auth
    .command("login")
    .description("store a credential for the render service")
    .option("--device", "sign in by entering a code in any browser (for SSH sessions)")
    .option("--api-key", "sign in with an API key (hidden prompt, or piped on stdin)")
    .option("--json", "print the result as JSON")
    .action(async (flags: { apiKey?: boolean; device?: boolean; json?: boolean }) => {
      try {
        if (flags.apiKey && flags.device) {
          throw new UsageError("Choose one of --device and --api-key.");
        }
        if (flags.device) await loginThroughDevice(io, Boolean(flags.json));
        else if (flags.apiKey) await loginWithApiKey(io, Boolean(flags.json));
        else await loginThroughBrowser(io, Boolean(flags.json));
      } catch (error) {
        reportError(error, Boolean(flags.json), io);
      }
    });

  auth
    .command("status")
    .description("show the active credential, the account and its credits")
    .option("--json", "print the status as JSON")
    .action(async (flags: { json?: boolean }) => {
      try {
        const status = await withCloudContext(
          io,
          async ({ client, config, credential }) => {
            if (!credential) throw notSignedInError();
            const user = await client.me();
            return { config, credential, user };
          },
          { requireCredential: false },
        );
        const { credential, user, config } = status;
        if (flags.json) {
          io.stdout.write(
            `${JSON.stringify(
              {
                api_url: config.apiUrl,
                source: credential.source,
                ...(credential.file ? { file: credential.file } : {}),
                kind: credential.kind,
                user: {
                  username: user.username,
                  email: user.email,
                  first_name: user.first_name,
                  last_name: user.last_name,
                },
                billing: user.billing,
              },
              null,
              2,
            )}\n`,
          );
          return;
        }
        io.stdout.write(
          [
            `Signed in to ${config.apiUrl} as ${user.email}`,
            `  credential: ${credential.kind === "oauth" ? "OAuth token" : "API key"} from ${SOURCE_TEXT[credential.source]}${credential.file ? ` (${credential.file})` : ""}`,
            `  plan: ${user.billing.plan}; credits: ${user.billing.credits_remaining} left, ${user.billing.credits_used} used`,
          ].join("\n") + "\n",
        );
      } catch (error) {
        reportError(error, Boolean(flags.json), io);
      }
    });

  auth
    .command("logout")
    .description("revoke the sign-in on the service and remove the stored credential")
    .option("--keep-api-key", "keep a stored API key (remove only the browser/device sign-in)")
    .option("--json", "print the result as JSON")
    .action(async (flags: { keepApiKey?: boolean; json?: boolean }) => {
      try {
        const result = await signOutHere(io, { keepApiKey: Boolean(flags.keepApiKey) });
        if (flags.json) {
          io.stdout.write(
            `${JSON.stringify({ signed_out: result.removed, revoked: result.revoked, file: result.location }, null, 2)}\n`,
          );
        } else {
          io.stdout.write(
            result.removed
              ? `Signed out${result.revoked ? " and revoked the sign-in on the service" : ""}; removed the credential from ${result.location}.\n`
              : "No stored credential; nothing to remove.\n",
          );
        }
        if (result.revokeError) {
          io.stderr.write(
            `warning: the service could not revoke the sign-in (${result.revokeError}); the local copy is removed.\n`,
          );
        }
        if (io.env.SVC_API_KEY?.trim() || io.env.SVC_ALIAS_API_KEY?.trim()) {
          io.stderr.write(
            "note: SVC_API_KEY / SVC_ALIAS_API_KEY is still set in this environment.\n",
          );
        }
      } catch (error) {
        reportError(error, Boolean(flags.json), io);
      }
    });

  auth
    .command("refresh")
    .description("exchange the stored refresh token for a new access token now")
    .option("--json", "print the result as JSON")
    .action(async (flags: { json?: boolean }) => {
      try {
        await refreshSignIn(io, Boolean(flags.json));
      } catch (error) {
        reportError(error, Boolean(flags.json), io);
      }
    });
}
