import { mkdir, mkdtemp, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_API_URL, loadClientConfig } from "./config";
import { CredentialStore, resolveCredential } from "./credentials";
import { ClientError, scrubSecrets } from "./errors";

async function home(): Promise<string> {
  return mkdtemp(join(tmpdir(), "svc-credentials-test-"));
}

describe("client config", () => {
  it("uses the local service when SVC_API_URL is unset or empty, and strips trailing slashes", () => {
    expect(loadClientConfig({ HOME: "/h" })).toMatchObject({
      apiUrl: DEFAULT_API_URL,
      usesDefaultService: true,
      configDir: "/h/.svc",
      localDataDir: "/h/.svc/local",
    });
    expect(loadClientConfig({ HOME: "/h", SVC_API_URL: "" }).usesDefaultService).toBe(true);
    expect(
      loadClientConfig({ HOME: "/h", SVC_API_URL: "https://api.example.com/v//" }),
    ).toMatchObject({
      apiUrl: "https://api.example.com/v",
      usesDefaultService: false,
    });
    expect(loadClientConfig({ HOME: "/h", SVC_CONFIG_DIR: "/etc/svc" }).configDir).toBe("/etc/svc");
  });
});

describe("credential store", () => {
  it("writes 0600 in a 0700 folder, atomically, keeping keys it does not know", async () => {
    const dir = join(await home(), "config");
    await mkdir(dir, { mode: 0o755 });
    await writeFile(
      join(dir, "credentials"),
      JSON.stringify({ theirs: { a: 1 }, user: { email: "old" } }),
    );
    const store = new CredentialStore(dir);
    await store.saveApiKey("svc_key_abcdef123456", { email: "me@example.com" });
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(store.file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(store.file, "utf8"))).toEqual({
      theirs: { a: 1 },
      user: { email: "me@example.com" },
      api_key: "svc_key_abcdef123456",
    });
    expect(await readdir(dir)).toEqual(["credentials"]);
    expect(await store.clear()).toBe(true);
    expect(JSON.parse(await readFile(store.file, "utf8"))).toEqual({ theirs: { a: 1 } });
    expect(await store.clear()).toBe(false);
  });

  it("refuses a credentials file that is not a JSON object, with a fix", async () => {
    const dir = await home();
    await writeFile(join(dir, "credentials"), "not json");
    await expect(new CredentialStore(dir).read()).rejects.toMatchObject({
      code: "credentials_corrupt",
      hint: "Remove the file and sign in again.",
    });
  });
});

describe("credential resolution", () => {
  it("takes SVC_API_KEY, then SVC_ALIAS_API_KEY, then the store, then the local service's key", async () => {
    const root = await home();
    const env = { HOME: root };
    const config = loadClientConfig(env);
    expect(await resolveCredential(config, env)).toBeUndefined();

    await mkdir(config.localDataDir, { recursive: true });
    await writeFile(
      join(config.localDataDir, "credentials"),
      JSON.stringify({ api_key: "svc_key_local0001" }),
    );
    expect(await resolveCredential(config, env)).toMatchObject({
      secret: "svc_key_local0001",
      source: "local-service",
    });
    // The local service's key only stands in for the default local service.
    const remote = loadClientConfig({ ...env, SVC_API_URL: "https://api.example.com" });
    expect(await resolveCredential(remote, env)).toBeUndefined();

    await new CredentialStore(config.configDir).saveApiKey("svc_key_stored0001");
    expect(await resolveCredential(config, env)).toMatchObject({
      secret: "svc_key_stored0001",
      source: "credentials-file",
    });
    expect(
      await resolveCredential(config, { ...env, SVC_ALIAS_API_KEY: "svc_key_alias0001" }),
    ).toMatchObject({ secret: "svc_key_alias0001", source: "env:SVC_ALIAS_API_KEY" });
    expect(
      await resolveCredential(config, {
        ...env,
        SVC_ALIAS_API_KEY: "svc_key_alias0001",
        SVC_API_KEY: "svc_key_env00001",
      }),
    ).toMatchObject({ secret: "svc_key_env00001", source: "env:SVC_API_KEY" });
  });

  it("scrubs resolved keys and URL signatures from every error message", async () => {
    const root = await home();
    const env = { HOME: root, SVC_API_KEY: "plainSecretValue42" };
    await resolveCredential(loadClientConfig(env), env);
    const error = new ClientError(
      "x",
      "bad plainSecretValue42 at http://h/storage/a.mp4?exp=1&sig=abcdef",
    );
    expect(error.message).toBe("bad [REDACTED] at http://h/storage/a.mp4?exp=1&sig=[REDACTED]");
    expect(scrubSecrets("Authorization: Bearer svc_key_123456789")).not.toContain("123456789");
  });
});
