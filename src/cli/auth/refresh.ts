// `svc auth refresh`: exchanges the stored refresh token for a new access token now.
import type { Command } from "commander";
import { ClientError } from "../../core/index";
import { OAuthSession } from "../../core/index";
import { printJson, runAction } from "../command";
import type { CliIo } from "../io";
import { cliCredentialBackend, withCloudContext } from "../cloud/context";

export interface RefreshOptions {
  json?: boolean;
}

export interface RefreshResult {
  refreshed: true;
  expires_at: number;
  file: string;
}

export async function runRefresh(options: RefreshOptions, io: CliIo): Promise<RefreshResult> {
  const { expiresAt, location } = await withCloudContext(
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
  const result = { refreshed: true, expires_at: expiresAt, file: location } as const;
  if (options.json) {
    printJson(io, result);
  } else {
    const when = new Date(expiresAt * 1000).toISOString();
    io.stdout.write(`Refreshed the sign-in; the new access token is valid until ${when}.\n`);
  }
  return result;
}

export function registerAuthRefreshCommand(auth: Command, io: CliIo): void {
  auth
    .command("refresh")
    .description("exchange the stored refresh token for a new access token now")
    .option("--json", "print the result as JSON")
    .action((flags: RefreshOptions) => runAction(io, flags.json, () => runRefresh(flags, io)));
}
