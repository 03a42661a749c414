// The credential store (SPEC.md section 5): `<config dir>/credentials`, a JSON object
// `{api_key?, oauth?, user?}` shared with the service's other client, so keys this client does not
// know are kept as they are. Writes are atomic (temp file + rename), the file is 0600 and its
// folder 0700. Resolution order: SVC_API_KEY, SVC_ALIAS_API_KEY, the store, then (for the default
// local service only) the local service's own key file.
import { chmod, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeJsonFileAtomic } from "../node/index";
import { localServiceKeyFile, type ClientConfig } from "./config";
import { ClientError, registerSecret } from "./errors";

export interface OAuthTokens {
  access_token: string;
  refresh_token: string;
  expires_at: number;
  scope: string;
  token_type: string;
}

export interface StoredCredentials {
  api_key?: string;
  oauth?: OAuthTokens;
  user?: { email?: string; username?: string };
  [unknown: string]: unknown;
}

/** The change that stores an API key (and whose it is) in a credentials object; other keys stay. */
export function withApiKey(
  apiKey: string,
  user?: StoredCredentials["user"],
): (current: StoredCredentials) => StoredCredentials {
  return (current) => ({ ...current, api_key: apiKey, ...(user ? { user } : {}) });
}

export type CredentialSource =
  "env:SVC_API_KEY" | "env:SVC_ALIAS_API_KEY" | "credentials-file" | "keychain" | "local-service";

export interface ResolvedCredential {
  /** The API key or OAuth access token sent as `x-api-key` / `Authorization: Bearer`. */
  secret: string;
  kind: "api_key" | "oauth";
  source: CredentialSource;
  /** The file it came from, for `svc auth status`. */
  file?: string;
}

export class CredentialStore {
  readonly file: string;

  constructor(readonly dir: string) {
    this.file = join(dir, "credentials");
  }

  static forConfig(config: ClientConfig): CredentialStore {
    return new CredentialStore(config.configDir);
  }

  async read(): Promise<StoredCredentials> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw new ClientError(
        "credentials_unreadable",
        `Cannot read ${this.file}: ${(error as Error).message}`,
        "Check the file's permissions, or remove it and sign in again.",
      );
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
        return parsed as StoredCredentials;
      }
    } catch {
      // fall through
    }
    throw new ClientError(
      "credentials_corrupt",
      `${this.file} is not a JSON object.`,
      "Remove the file and sign in again.",
    );
  }

  /** Replaces the stored object atomically: temp file (0600) in the same folder, then rename. */
  async write(credentials: StoredCredentials): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    await writeJsonFileAtomic(this.file, credentials);
  }

  /** Reads, changes and writes back, keeping every key the change does not touch. */
  async update(change: (current: StoredCredentials) => StoredCredentials): Promise<void> {
    await this.write(change(await this.read()));
  }

  async saveApiKey(apiKey: string, user?: StoredCredentials["user"]): Promise<void> {
    await this.update(withApiKey(apiKey, user));
  }

  /** Removes what this client signs in with (api_key, oauth, user); other keys stay. */
  async clear(): Promise<boolean> {
    const current = await this.read();
    if (current.api_key === undefined && current.oauth === undefined) return false;
    const { api_key: _key, oauth: _oauth, user: _user, ...rest } = current;
    await this.write(rest);
    return true;
  }
}

async function readLocalServiceKey(file: string): Promise<string | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as { api_key?: unknown };
    return typeof parsed.api_key === "string" && parsed.api_key ? parsed.api_key : undefined;
  } catch {
    return undefined;
  }
}

/** Reads the stored credential from elsewhere than the file: the OS keychain (keychain.ts). */
export interface StoredCredentialReader {
  read(): Promise<StoredCredentials>;
  /** The file path, or "the OS keychain": shown as `file` by `svc auth status`. */
  readonly location: string;
  /** Where the last read came from (default "credentials-file"). */
  readonly source?: "credentials-file" | "keychain";
}

/** First match wins: env SVC_API_KEY, env SVC_ALIAS_API_KEY, the store, the local service's key. */
export async function resolveCredential(
  config: ClientConfig,
  env: NodeJS.ProcessEnv = process.env,
  reader?: StoredCredentialReader,
): Promise<ResolvedCredential | undefined> {
  const found = await findCredential(config, env, reader);
  registerSecret(found?.secret);
  return found;
}

async function findCredential(
  config: ClientConfig,
  env: NodeJS.ProcessEnv,
  reader?: StoredCredentialReader,
): Promise<ResolvedCredential | undefined> {
  const primary = env.SVC_API_KEY?.trim();
  if (primary) return { secret: primary, kind: "api_key", source: "env:SVC_API_KEY" };
  const alias = env.SVC_ALIAS_API_KEY?.trim();
  if (alias) return { secret: alias, kind: "api_key", source: "env:SVC_ALIAS_API_KEY" };
  const fileStore = CredentialStore.forConfig(config);
  const stored = await (reader ?? fileStore).read();
  const store = { file: reader?.location ?? fileStore.file };
  const source = reader?.source ?? "credentials-file";
  if (stored.oauth?.access_token) {
    return { secret: stored.oauth.access_token, kind: "oauth", source, file: store.file };
  }
  if (stored.api_key) {
    return { secret: stored.api_key, kind: "api_key", source, file: store.file };
  }
  if (config.usesDefaultService) {
    const file = localServiceKeyFile(config);
    const key = await readLocalServiceKey(file);
    if (key) return { secret: key, kind: "api_key", source: "local-service", file };
  }
  return undefined;
}
