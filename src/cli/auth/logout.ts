// `svc auth logout`: revokes the OAuth sign-in on the service (starting the local one when it is
// the default and not running), then removes it from the store (src/core/oauth signOut).
import type { Command } from "commander";
import { loadClientConfig } from "../../core/index";
import { revokeToken, signOut, type SignOutResult } from "../../core/index";
import { printJson, runAction } from "../command";
import type { CliIo } from "../io";
import { cliCredentialBackend, withCloudContext } from "../cloud/context";

export interface LogoutOptions {
  keepApiKey?: boolean;
  json?: boolean;
}

export async function runLogout(options: LogoutOptions, io: CliIo): Promise<SignOutResult> {
  const backend = cliCredentialBackend(io, loadClientConfig(io.env));
  const result = await signOut(backend, {
    keepApiKey: Boolean(options.keepApiKey),
    revoke: (refreshToken) =>
      withCloudContext(io, async ({ config }) => revokeToken(config.apiUrl, refreshToken), {
        requireCredential: false,
      }),
  });
  if (options.json) {
    printJson(io, { signed_out: result.removed, revoked: result.revoked, file: result.location });
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
    io.stderr.write("note: SVC_API_KEY / SVC_ALIAS_API_KEY is still set in this environment.\n");
  }
  return result;
}

export function registerAuthLogoutCommand(auth: Command, io: CliIo): void {
  auth
    .command("logout")
    .description("revoke the sign-in on the service and remove the stored credential")
    .option("--keep-api-key", "keep a stored API key (remove only the browser/device sign-in)")
    .option("--json", "print the result as JSON")
    .action((flags: LogoutOptions) => runAction(io, flags.json, () => runLogout(flags, io)));
}
