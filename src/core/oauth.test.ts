// The client side of sign-in against a real service process: a real Chromium (the engine's
// own) signs in and approves through the service's pages while the core waits on its loopback
// listener or polls the device grant; then refresh, the 401 hook and revocation. Time passes
// for real: the service gives access tokens 2 s here.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_CHROMIUM_ARGS, resolveChromium } from "../engine/browser/browser";
import { CLI_CLIENT_ID } from "../shared/oauth";
import { startService, tempDir, type ServiceProcess } from "../server/testing/service-process";
import { addUserWithPassword, oauthPost, tokensThroughPages } from "../server/testing/sign-in";
import { ApiClient } from "./api-client";
import { sleep } from "./backoff";
import { CredentialStore } from "./credentials";
import { ClientError } from "./errors";
import { FileCredentialBackend } from "./keychain";
import {
  OAuthSession,
  loginWithBrowser,
  loginWithDevice,
  revokeToken,
  saveSignIn,
  startLoopbackListener,
  storedTokens,
} from "./oauth";
import { waitFor } from "../shared/testing/wait-for";

const EMAIL = "grace@example.com";
const PASSWORD = "a long and good password";
let svc: ServiceProcess;
let browser: Browser;

beforeAll(async () => {
  const resolved = await resolveChromium();
  [svc, browser] = await Promise.all([
    startService({
      env: {
        SVC_SERVER_ACCESS_TOKEN_TTL_SECONDS: "2",
        SVC_SERVER_DEVICE_POLL_INTERVAL_SECONDS: "1",
      },
    }),
    chromium.launch({
      executablePath: resolved.executablePath,
      args: BASE_CHROMIUM_ARGS,
      env: { ...process.env, ...resolved.env },
    }),
  ]);
  await addUserWithPassword(svc.dataDir, EMAIL, PASSWORD);
});

afterAll(async () => {
  await browser?.close();
  await svc?.kill();
});

async function fileBackend(): Promise<FileCredentialBackend> {
  return new FileCredentialBackend(
    new CredentialStore(join(await tempDir("svc-oauth-client-"), "config")),
  );
}

async function signInOnPage(page: Page): Promise<void> {
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
}

function requestLines(path: string, status: number): number {
  return svc
    .logs()
    .split("\n")
    .filter((line) => line.includes(`"url":"${path}`) && line.includes(`"statusCode":${status}`))
    .length;
}

describe("browser sign-in", () => {
  it("signs in with a real Chromium through the service's pages and stores tokens 0600", async () => {
    const page = await browser.newPage();
    let shown: { url: string; opened: boolean } | undefined;
    let pageFlow: Promise<void> | undefined;
    try {
      const tokens = await loginWithBrowser({
        baseUrl: svc.url,
        openUrl: async (url) => {
          pageFlow = (async () => {
            await page.goto(url);
            await signInOnPage(page);
            await page.getByRole("button", { name: "Allow" }).click();
          })();
          return true;
        },
        onAuthorizeUrl: (url, opened) => (shown = { url, opened }),
      });
      await pageFlow;
      await expect
        .poll(() => page.locator("h1").textContent(), { timeout: 15_000 })
        .toBe("Signed in to svc");
      expect(shown?.opened).toBe(true);
      expect(shown?.url).toContain("code_challenge_method=S256");
      const backend = await fileBackend();
      const user = await saveSignIn(backend, svc.url, tokens);
      expect(user.email).toBe(EMAIL);
      const file = backend.location;
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const saved = JSON.parse(await readFile(file, "utf8"));
      expect(saved.oauth).toMatchObject({
        access_token: tokens.access_token,
        refresh_token: tokens.refresh_token,
        token_type: "Bearer",
        scope: "api",
      });
      expect(saved.oauth.expires_at).toBeGreaterThan(Date.now() / 1000);
      expect(saved.user.email).toBe(EMAIL);
    } finally {
      await page.close();
    }
  });

  it("refuses an answer with a wrong state, and answers the browser with an error page", async () => {
    const listener = await startLoopbackListener("the-expected-state");
    const refused = expect(listener.code).rejects.toMatchObject({ code: "oauth_state_mismatch" });
    const answer = await fetch(`${listener.redirectUri}?code=abc&state=another-state`);
    expect(answer.status).toBe(400);
    await refused;
  });

  it("passes a denial in the browser on as access_denied", async () => {
    const page = await browser.newPage();
    try {
      const login = loginWithBrowser({
        baseUrl: svc.url,
        openUrl: async (url) => {
          void (async () => {
            await page.goto(url);
            await signInOnPage(page);
            await page.getByRole("button", { name: "Deny" }).click();
          })();
          return true;
        },
        onAuthorizeUrl: () => undefined,
      });
      await expect(login).rejects.toMatchObject({ code: "access_denied" });
    } finally {
      await page.close();
    }
  });

  it("times out when the browser never comes back", async () => {
    const listener = await startLoopbackListener("state", { timeoutMs: 200 });
    await expect(listener.code).rejects.toMatchObject({ code: "login_timeout" });
  });
});

describe("device sign-in", () => {
  it("polls honouring interval and one slow_down while Chromium enters the code on /device", async () => {
    const page = await browser.newPage();
    const waits: number[] = [];
    let approving: Promise<void> | undefined;
    let verification: string | undefined;
    let code: string | undefined;
    try {
      const tokens = await loginWithDevice({
        baseUrl: svc.url,
        onCode: (authorization) => {
          expect(authorization.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
          verification = authorization.verification_uri;
          code = authorization.user_code;
        },
        sleep: async (ms, signal) => {
          waits.push(ms);
          // The second wait is cut short: that poll comes too early and earns a slow_down.
          if (waits.length === 2) return;
          // Once slowed down, the person types the code on the plain /device page.
          if (waits.length === 3) {
            approving = (async () => {
              await page.goto(verification!);
              await signInOnPage(page);
              await page.getByLabel("Code").fill(code!);
              await page.getByRole("button", { name: "Continue" }).click();
              await page.getByRole("button", { name: "Allow" }).click();
              await page.getByText("Device connected").waitFor();
            })();
            await Promise.all([approving, sleep(ms, signal)]);
            return;
          }
          await sleep(ms, signal);
        },
      });
      await approving;
      expect(verification).toBe(`${svc.url}/device`);
      expect(waits[0]).toBe(1000);
      expect(waits).toContain(6000);
      expect(waits.indexOf(6000)).toBe(2);
      const me = await new ApiClient({ baseUrl: svc.url, credential: tokens.access_token }).me();
      expect(me.email).toBe(EMAIL);
    } finally {
      await page.close();
    }
  });
});

describe("refresh and revocation", () => {
  it("refreshes before expiry (60 s skew) and saves the rotated pair", async () => {
    const backend = await fileBackend();
    const tokens = await tokensThroughPages(svc.url, EMAIL, PASSWORD);
    await backend.update((current) => ({ ...current, keep: "me", oauth: storedTokens(tokens) }));
    const session = new OAuthSession(backend, svc.url);
    // A 2 s token is always inside the 60 s skew: it is refreshed before use.
    const access = await session.accessToken();
    expect(access).not.toBe(tokens.access_token);
    expect(session.refreshCount).toBe(1);
    const saved = await backend.read();
    expect(saved.oauth?.access_token).toBe(access);
    expect(saved.oauth?.refresh_token).not.toBe(tokens.refresh_token);
    expect(saved.keep).toBe("me");
  });

  it("answers a 401 with exactly one refresh and one replay", async () => {
    const backend = await fileBackend();
    const tokens = await tokensThroughPages(svc.url, EMAIL, PASSWORD);
    await backend.update(() => ({ oauth: storedTokens(tokens) }));
    const session = new OAuthSession(backend, svc.url);
    let hookCalls = 0;
    let current = tokens.access_token;
    const client = new ApiClient({
      baseUrl: svc.url,
      credential: current,
      refreshCredential: async () => {
        hookCalls++;
        const fresh = await session.forceRefresh(current);
        if (fresh) current = fresh;
        return fresh;
      },
    });
    expect((await client.me()).email).toBe(EMAIL);
    expect(hookCalls).toBe(0);
    const expiresAt = tokens.expires_in * 1000 + Date.now();
    await waitFor("the access token to expire", async () =>
      Date.now() > expiresAt + 500 ? true : undefined,
    );
    const unauthorizedBefore = requestLines("/v3/users/me", 401);
    const okBefore = requestLines("/v3/users/me", 200);
    const refreshesBefore = requestLines("/v1/oauth/token", 200);
    expect((await client.me()).email).toBe(EMAIL);
    expect(hookCalls).toBe(1);
    expect(session.refreshCount).toBe(1);
    await waitFor("the service to log the requests", async () =>
      requestLines("/v3/users/me", 200) === okBefore + 1 ? true : undefined,
    );
    expect(requestLines("/v3/users/me", 401)).toBe(unauthorizedBefore + 1);
    expect(requestLines("/v1/oauth/token", 200)).toBe(refreshesBefore + 1);
    expect((await backend.read()).oauth?.access_token).toBe(current);
    // The render list (parsed apart from the envelope) goes through the same hook.
    const refreshedAt = Date.now() + tokens.expires_in * 1000;
    await waitFor("the refreshed token to expire", async () =>
      Date.now() > refreshedAt + 500 ? true : undefined,
    );
    expect((await client.listRenders({ limit: 1 })).data).toEqual([]);
    expect(hookCalls).toBe(2);
  });

  it("stores nothing and revokes the tokens when /v3/users/me refuses them", async () => {
    const backend = await fileBackend();
    const tokens = await tokensThroughPages(svc.url, EMAIL, PASSWORD);
    const expiresAt = Date.now() + tokens.expires_in * 1000;
    await waitFor("the access token to expire", async () =>
      Date.now() > expiresAt + 500 ? true : undefined,
    );
    await expect(saveSignIn(backend, svc.url, tokens)).rejects.toBeInstanceOf(ClientError);
    expect(await backend.read()).toEqual({});
    const reuse = await oauthPost(svc.url, "/v1/oauth/token", {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: CLI_CLIENT_ID,
    });
    expect(reuse.body.error).toBe("invalid_grant");
    expect(reuse.body.error_description).toMatch(/revoked/);
  });

  it("revokes on logout: the old access token then gets 401", async () => {
    const tokens = await tokensThroughPages(svc.url, EMAIL, PASSWORD);
    const client = new ApiClient({
      baseUrl: svc.url,
      credential: tokens.access_token,
      retryLimit: 0,
    });
    expect((await client.me()).email).toBe(EMAIL);
    await revokeToken(svc.url, tokens.refresh_token);
    await expect(client.me()).rejects.toMatchObject({ status: 401 });
  });

  it("turns a revoked sign-in into authentication_failed when refreshing", async () => {
    const backend = await fileBackend();
    const tokens = await tokensThroughPages(svc.url, EMAIL, PASSWORD);
    await backend.update(() => ({ oauth: storedTokens(tokens) }));
    await revokeToken(svc.url, tokens.refresh_token);
    await expect(new OAuthSession(backend, svc.url).forceRefresh()).rejects.toMatchObject({
      code: "authentication_failed",
    });
  });
});
