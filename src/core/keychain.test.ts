// The credential store choice: SVC_CREDENTIAL_STORE=keychain uses keytar when it loads and the
// secret service answers; otherwise it warns once and keeps the credential in the file (0600).
// The fallback is exercised with the real dynamic import failing (a module that is not installed)
// and with keytar loaded but no secret service running; keychain-secret-service.test.ts runs the
// keychain itself under a real gnome-keyring.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../server/testing/service-process";
import { loadClientConfig } from "./config";
import { CredentialStore } from "./credentials";
import {
  FileCredentialBackend,
  KeychainCredentialBackend,
  loadKeytar,
  openCredentialBackend,
  resetKeychainWarning,
} from "./keychain";

const tokens = {
  access_token: "svc_at_exampleexampleexample",
  refresh_token: "svc_rt_exampleexampleexample",
  expires_at: 2_000_000_000,
  scope: "api",
  token_type: "Bearer",
};

async function configIn() {
  const dir = await tempDir("svc-keychain-");
  return loadClientConfig({
    HOME: dir,
    SVC_CONFIG_DIR: join(dir, "config"),
    SVC_API_URL: "http://127.0.0.1:1",
  });
}

beforeEach(() => resetKeychainWarning());

describe("credential store choice", () => {
  it("uses the file by default", async () => {
    const backend = openCredentialBackend(await configIn(), { env: {} });
    expect(backend).toBeInstanceOf(FileCredentialBackend);
  });

  it("falls back to the file with one warning when keytar cannot be loaded, and loses nothing", async () => {
    const config = await configIn();
    const warnings: string[] = [];
    const backend = openCredentialBackend(config, {
      env: { SVC_CREDENTIAL_STORE: "keychain" },
      warn: (message) => warnings.push(message),
      // The real loader with a module that, like keytar here, is not installed.
      load: () => loadKeytar("keytar-is-not-installed-here"),
    });
    expect(backend).toBeInstanceOf(KeychainCredentialBackend);
    await backend.update((current) => ({ ...current, oauth: tokens }));
    await backend.update((current) => ({ ...current, api_key: "svc_key_abcdefabcdef" }));
    expect(await backend.read()).toEqual({ oauth: tokens, api_key: "svc_key_abcdefabcdef" });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/keychain is not available.*credentials file/);
    const file = join(config.configDir, "credentials");
    expect(backend.location).toBe(file);
    expect(JSON.parse(await readFile(file, "utf8")).oauth).toEqual(tokens);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    // A second store in the same process does not warn again.
    const again = openCredentialBackend(config, {
      env: { SVC_CREDENTIAL_STORE: "keychain" },
      warn: (message) => warnings.push(message),
      load: () => loadKeytar("keytar-is-not-installed-here"),
    });
    expect((await again.read()).oauth).toEqual(tokens);
    expect(warnings).toHaveLength(1);
  });

  it("falls back the same way with the default loader when keytar is not installed", async () => {
    // Whether a keychain is usable here is asked of keytar itself, not of the store under test.
    const keytar = await loadKeytar().catch(() => undefined);
    const keychainAnswers =
      keytar !== undefined &&
      (await keytar.getPassword("svc-test-probe", "nobody").then(
        () => true,
        () => false,
      ));
    const warnings: string[] = [];
    const config = await configIn();
    const backend = openCredentialBackend(config, {
      env: { SVC_CREDENTIAL_STORE: "keychain" },
      warn: (message) => warnings.push(message),
    });
    await backend.update(() => ({ oauth: tokens }));
    expect((await backend.read()).oauth).toEqual(tokens);
    const file = await readFile(join(config.configDir, "credentials"), "utf8").catch(() => "");
    if (keychainAnswers) {
      expect(warnings).toEqual([]);
      expect(file).not.toContain(tokens.refresh_token);
    } else {
      expect(warnings).toEqual([expect.stringMatching(/keychain is not available/)]);
      expect(JSON.parse(file).oauth).toEqual(tokens);
    }
  });

  it("falls back to the file when keytar loads but the secret service does not answer", async () => {
    const config = await configIn();
    const warnings: string[] = [];
    const noSecretService = () =>
      Promise.reject(new Error("Cannot autolaunch D-Bus without X11 $DISPLAY"));
    const backend = new KeychainCredentialBackend({
      file: CredentialStore.forConfig(config),
      account: config.apiUrl,
      warn: (message) => warnings.push(message),
      // keytar's functions as they fail on a machine without a secret service.
      load: async () => ({
        getPassword: noSecretService,
        setPassword: noSecretService,
        deletePassword: noSecretService,
      }),
    });
    await backend.update(() => ({ oauth: tokens }));
    expect((await backend.read()).oauth).toEqual(tokens);
    expect(warnings).toEqual([expect.stringMatching(/secret service did not answer/)]);
  });
});
