// Where the credential lives (SPEC.md section 5): the credentials file by default, or the OS
// keychain through keytar when SVC_CREDENTIAL_STORE=keychain (or the app setting). keytar is an
// optional native dependency: when it is not installed, or there is no secret service to talk
// to (a headless Linux box), the store says so once and keeps using the file — it never crashes
// and never drops a credential. In the keychain the whole credential object is one JSON secret
// under service "svc" and the service URL as account, so two services never mix. Once a write to
// the keychain succeeded, a sign-in left in the file (from an earlier fallback) is removed from
// it, so the secret is in one place only. Refreshing an OAuth sign-in is locked through a file
// next to the credentials file (credential-lock.ts) whichever store holds the tokens.
import type { ClientConfig } from "./config";
import { CredentialStore, type StoredCredentials } from "./credentials";
import type { CredentialBackend } from "./oauth";

export const KEYCHAIN_SERVICE = "svc";

/** The part of keytar's API this store uses. */
export interface Keytar {
  getPassword(service: string, account: string): Promise<string | null>;
  setPassword(service: string, account: string, password: string): Promise<void>;
  deletePassword(service: string, account: string): Promise<boolean>;
}

/** Loads keytar if it is installed; rejects when it is not (or its native part fails to load). */
export async function loadKeytar(moduleName = "keytar"): Promise<Keytar> {
  const loaded = (await import(/* @vite-ignore */ moduleName)) as Keytar & { default?: Keytar };
  const keytar = loaded.default ?? loaded;
  if (typeof keytar.getPassword !== "function") throw new Error(`${moduleName} has no getPassword`);
  return keytar;
}

/** The credentials file as a backend. */
export class FileCredentialBackend implements CredentialBackend {
  constructor(readonly store: CredentialStore) {}

  get location(): string {
    return this.store.file;
  }

  get lockFile(): string {
    return `${this.store.file}.lock`;
  }

  readonly source = "credentials-file" as const;

  read(): Promise<StoredCredentials> {
    return this.store.read();
  }

  update(change: (current: StoredCredentials) => StoredCredentials): Promise<void> {
    return this.store.update(change);
  }
}

let warnedThisProcess = false;

export interface KeychainOptions {
  file: CredentialStore;
  /** The service URL: one keychain entry per service. */
  account: string;
  load?: () => Promise<Keytar>;
  /** Where the one-time fallback warning goes (stderr in the CLI). */
  warn: (message: string) => void;
}

export class KeychainCredentialBackend implements CredentialBackend {
  private keytar: Promise<Keytar | undefined> | undefined;
  private fellBack = false;
  /** Where the last read found the credential (the file while the keychain has none). */
  private lastReadFrom: "keychain" | "credentials-file" = "keychain";

  constructor(private readonly options: KeychainOptions) {}

  get location(): string {
    return this.source === "keychain" ? "the OS keychain" : this.options.file.file;
  }

  get source(): "keychain" | "credentials-file" {
    return this.fellBack ? "credentials-file" : this.lastReadFrom;
  }

  get lockFile(): string {
    return `${this.options.file.file}.lock`;
  }

  /** True once the keychain turned out unusable and the file is used instead. */
  get usingFile(): boolean {
    return this.fellBack;
  }

  private fallBack(reason: string): void {
    this.fellBack = true;
    if (warnedThisProcess) return;
    warnedThisProcess = true;
    this.options.warn(
      `svc: the OS keychain is not available (${reason}); using the credentials file ${this.options.file.file} instead.`,
    );
  }

  private async open(): Promise<Keytar | undefined> {
    if (this.fellBack) return undefined;
    this.keytar ??= (this.options.load ?? (() => loadKeytar()))().catch((error: unknown) => {
      this.fallBack(`keytar could not be loaded: ${firstLine(error)}`);
      return undefined;
    });
    return this.keytar;
  }

  async read(): Promise<StoredCredentials> {
    const keytar = await this.open();
    if (keytar) {
      try {
        const secret = await keytar.getPassword(KEYCHAIN_SERVICE, this.options.account);
        if (secret) {
          this.lastReadFrom = "keychain";
          return parseSecret(secret);
        }
      } catch (error) {
        this.fallBack(`the secret service did not answer: ${firstLine(error)}`);
      }
    }
    // Nothing in the keychain (yet): what the file holds, e.g. from an earlier fallback.
    const stored = await this.options.file.read();
    this.lastReadFrom = hasSignIn(stored) ? "credentials-file" : "keychain";
    return stored;
  }

  async update(change: (current: StoredCredentials) => StoredCredentials): Promise<void> {
    const next = change(await this.read());
    const keytar = await this.open();
    if (keytar) {
      try {
        await keytar.setPassword(KEYCHAIN_SERVICE, this.options.account, JSON.stringify(next));
        this.lastReadFrom = "keychain";
        // Moved into the keychain: a copy left in the file would outlive a sign-out.
        if (hasSignIn(await this.options.file.read())) await this.options.file.clear();
        return;
      } catch (error) {
        this.fallBack(`the secret service did not answer: ${firstLine(error)}`);
      }
    }
    await this.options.file.write(next);
  }
}

function hasSignIn(stored: StoredCredentials): boolean {
  return stored.api_key !== undefined || stored.oauth !== undefined;
}

function parseSecret(secret: string): StoredCredentials {
  const parsed: unknown = JSON.parse(secret);
  if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
    return parsed as StoredCredentials;
  }
  return {};
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 200);
}

/** The backend chosen by SVC_CREDENTIAL_STORE (`file`, the default, or `keychain`) or the app. */
export function openCredentialBackend(
  config: ClientConfig,
  options: {
    env?: NodeJS.ProcessEnv;
    warn?: (message: string) => void;
    load?: () => Promise<Keytar>;
    /** The app setting; SVC_CREDENTIAL_STORE, when set, wins. */
    store?: "file" | "keychain";
  } = {},
): FileCredentialBackend | KeychainCredentialBackend {
  const env = options.env ?? process.env;
  const file = CredentialStore.forConfig(config);
  const choice = (env.SVC_CREDENTIAL_STORE?.trim() || options.store || "file").toLowerCase();
  if (choice !== "keychain") return new FileCredentialBackend(file);
  return new KeychainCredentialBackend({
    file,
    account: config.apiUrl,
    warn: options.warn ?? ((message) => process.stderr.write(`${message}\n`)),
    ...(options.load ? { load: options.load } : {}),
  });
}

/** For tests: forget that this process already warned. */
export function resetKeychainWarning(): void {
  warnedThisProcess = false;
}
