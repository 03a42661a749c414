// Which render service the app talks to, and with which credential. Setting "service" = local:
// the supervised embedded service and its own account key (`<local data dir>/credentials`);
// a URL: that service with the credential of SPEC.md section 5 (SVC_API_KEY, SVC_ALIAS_API_KEY,
// then the credential store shared with the CLI). The credential itself never leaves this module
// except inside the API client; auth status reports where it came from, never what it is.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { AuthStatus, ServiceState } from "../shared/ipc";
import { ApiClient } from "../core/index";
import type { ClientConfig } from "../core/index";
import { resolveCredential, withApiKey, type ResolvedCredential } from "../core/index";
import { ClientError, registerSecret } from "../core/index";
import { openCredentialBackend } from "../core/index";
import {
  apiCredential,
  OAuthSession,
  revokeToken,
  signOut,
  type CredentialBackend,
} from "../core/index";
import type { SignInTarget } from "./auth-signin";
import type { ServiceSupervisor } from "./service-supervisor";
import { toIpcError } from "./ipc-errors";
import type { SettingsStore } from "./settings-store";

export interface ServiceConnectionOptions {
  settings: SettingsStore;
  supervisor: ServiceSupervisor;
  /** Data folder of the embedded service (holds its account key). */
  localDataDir: string;
  /** Folder of the credential store (SVC_CONFIG_DIR, else ~/.svc). */
  configDir: string;
  env?: NodeJS.ProcessEnv;
  userAgent?: string;
}

interface Resolved {
  url: string;
  credential: ResolvedCredential | undefined;
  /** The store it came from (remote services only); refreshes an OAuth sign-in. */
  backend?: CredentialBackend;
}

export class ServiceConnection {
  private readonly env: NodeJS.ProcessEnv;

  constructor(private readonly options: ServiceConnectionOptions) {
    this.env = options.env ?? process.env;
  }

  get mode(): "local" | "remote" {
    return this.remoteUrl() === undefined ? "local" : "remote";
  }

  /** The base URL of the service in the settings, or undefined for the embedded local one. */
  private remoteUrl(): string | undefined {
    const { service } = this.options.settings.get();
    return service === "local" ? undefined : service.replace(/\/+$/, "");
  }

  state(): ServiceState {
    const url = this.remoteUrl();
    if (url === undefined) return this.options.supervisor.state();
    return {
      mode: "remote",
      status: "remote",
      url,
      restarts: 0,
      message: undefined,
    };
  }

  /** An API client for the current service; starts the embedded one when it is needed. */
  async client(signal?: AbortSignal): Promise<ApiClient> {
    const { url, credential, backend } = await this.resolve(signal);
    // An OAuth sign-in is refreshed before it expires and once on a 401 (then replayed), under
    // the lock the CLI uses too, so the app and a terminal never both spend a refresh token.
    const oauth =
      credential?.kind === "oauth" && backend ? new OAuthSession(backend, url) : undefined;
    return new ApiClient({
      baseUrl: url,
      ...(await apiCredential(credential, oauth)),
      userAgent: this.options.userAgent ?? "svc-desktop",
      // A service that is restarting answers again within seconds; the render queue retries whole
      // steps after that, so single requests need not wait long.
      retryLimit: 2,
      backoffMs: 500,
    });
  }

  /** Resolves when the service may be answering again after a transient failure. */
  async waitUntilAvailable(signal?: AbortSignal): Promise<void> {
    if (this.mode === "local") await this.options.supervisor.waitReady(signal);
  }

  async authStatus(signal?: AbortSignal): Promise<AuthStatus> {
    let resolved: Resolved;
    try {
      resolved = await this.resolve(signal);
    } catch (error) {
      return { ...signedOut(this.state().url ?? ""), problem: problemOf(error) };
    }
    const { url, credential } = resolved;
    if (!credential) return signedOut(url);
    const base: AuthStatus = {
      signedIn: true,
      service: url,
      source: credential.source,
      kind: credential.kind,
      user: undefined,
      credits: undefined,
      problem: undefined,
    };
    try {
      const me = await (await this.client(signal)).me(signal);
      return {
        ...base,
        user: { email: me.email, username: me.username },
        credits: {
          remaining: me.billing.credits_remaining,
          used: me.billing.credits_used,
          plan: me.billing.plan,
        },
      };
    } catch (error) {
      return { ...base, problem: problemOf(error) };
    }
  }

  /** Checks the key against the current service, then keeps it in the credential store. */
  async loginWithApiKey(apiKey: string, signal?: AbortSignal): Promise<AuthStatus> {
    registerSecret(apiKey);
    const { url } = await this.resolve(signal);
    const probe = new ApiClient({
      baseUrl: url,
      credential: apiKey,
      retryLimit: 1,
      backoffMs: 500,
    });
    const me = await probe.me(signal);
    await this.backend(url).update(withApiKey(apiKey, { email: me.email, username: me.username }));
    return this.authStatus(signal);
  }

  /** Revokes an OAuth sign-in on the service, then removes the stored credential. */
  async logout(signal?: AbortSignal): Promise<AuthStatus> {
    const url = this.remoteUrl();
    if (url !== undefined) {
      await signOut(this.backend(url), {
        keepApiKey: false,
        revoke: (refreshToken) => revokeToken(url, refreshToken),
      });
    }
    return this.authStatus(signal);
  }

  /** Where a browser/device sign-in goes: the service URL of the settings and its store. */
  async signInTarget(): Promise<SignInTarget> {
    const url = this.remoteUrl();
    if (url === undefined) {
      throw new ClientError(
        "local_service_signed_in",
        "The local service signs the app in with its own key; there is nothing to sign in to.",
        "To use another service, enter its URL in Settings, then sign in here.",
      );
    }
    return { baseUrl: url, backend: this.backend(url) };
  }

  /** The credential store of the settings (file or OS keychain), one entry per service. */
  private backend(url: string): CredentialBackend {
    return openCredentialBackend(this.clientConfig(url), {
      env: this.env,
      store: this.options.settings.get().credentialStore,
    });
  }

  private clientConfig(url: string): ClientConfig {
    return {
      apiUrl: url,
      usesDefaultService: false,
      configDir: this.options.configDir,
      localDataDir: this.options.localDataDir,
    };
  }

  private async resolve(signal?: AbortSignal): Promise<Resolved> {
    const remote = this.remoteUrl();
    if (remote === undefined) {
      const url = await this.options.supervisor.ensureStarted(signal);
      const file = join(this.options.localDataDir, "credentials");
      const key = await readLocalKey(file);
      registerSecret(key);
      return {
        url,
        credential: key
          ? { secret: key, kind: "api_key", source: "local-service", file }
          : undefined,
      };
    }
    const backend = this.backend(remote);
    const credential = await resolveCredential(this.clientConfig(remote), this.env, backend);
    return { url: remote, credential, backend };
  }
}

function signedOut(service: string): AuthStatus {
  return {
    signedIn: false,
    service,
    source: undefined,
    kind: undefined,
    user: undefined,
    credits: undefined,
    problem: undefined,
  };
}

function problemOf(error: unknown): AuthStatus["problem"] {
  return error instanceof ClientError
    ? toIpcError(error)
    : { code: "service_unavailable", message: toIpcError(error).message };
}

async function readLocalKey(file: string): Promise<string | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as { api_key?: unknown };
    return typeof parsed.api_key === "string" && parsed.api_key ? parsed.api_key : undefined;
  } catch {
    return undefined;
  }
}
