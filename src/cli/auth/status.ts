// `svc auth status`: the active credential (where it comes from), the account and its credits.
import type { Command } from "commander";
import type { ClientConfig } from "../../core/index";
import type { ResolvedCredential } from "../../core/index";
import type { UserRecord } from "../../shared/api";
import { printJson, runAction } from "../command";
import type { CliIo } from "../io";
import { notSignedInError, withCloudContext } from "../cloud/context";

export interface StatusOptions {
  json?: boolean;
}

export interface StatusResult {
  config: ClientConfig;
  credential: ResolvedCredential;
  user: UserRecord;
}

const SOURCE_TEXT: Record<ResolvedCredential["source"], string> = {
  "env:SVC_API_KEY": "environment variable SVC_API_KEY",
  "env:SVC_ALIAS_API_KEY": "environment variable SVC_ALIAS_API_KEY",
  "credentials-file": "credentials file",
  keychain: "the OS keychain",
  "local-service": "the local service's key file",
};

export async function runStatus(options: StatusOptions, io: CliIo): Promise<StatusResult> {
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
  if (options.json) {
    printJson(io, {
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
    });
    return status;
  }
  io.stdout.write(
    [
      `Signed in to ${config.apiUrl} as ${user.email}`,
      `  credential: ${credential.kind === "oauth" ? "OAuth token" : "API key"} from ${SOURCE_TEXT[credential.source]}${credential.file ? ` (${credential.file})` : ""}`,
      `  plan: ${user.billing.plan}; credits: ${user.billing.credits_remaining} left, ${user.billing.credits_used} used`,
    ].join("\n") + "\n",
  );
  return status;
}

export function registerAuthStatusCommand(auth: Command, io: CliIo): void {
  auth
    .command("status")
    .description("show the active credential, the account and its credits")
    .option("--json", "print the status as JSON")
    .action((flags: StatusOptions) => runAction(io, flags.json, () => runStatus(flags, io)));
}
