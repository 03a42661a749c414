// The OAuth authorization server over real HTTP against a real service process: the sign-in
// and consent forms (with their CSRF tokens and cookies), authorization code + PKCE S256,
// refresh rotation and reuse detection, the device grant, revocation, and access tokens on /v3.
// Lifetimes are shortened through the service's environment so expiry is observable.
import BetterSqlite3 from "better-sqlite3";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_CLIENT_ID, DEVICE_CODE_GRANT } from "../../shared/oauth";
import { api, startService, type ServiceProcess } from "../testing/service-process";
import {
  FormBrowser,
  addUserWithPassword,
  authorizePath,
  oauthPost,
  pkcePair,
} from "../testing/sign-in";
import { waitFor } from "../../shared/testing/wait-for";

let svc: ServiceProcess;
const EMAIL = "ada@example.com";
const PASSWORD = "correct horse battery";
const REDIRECT = "http://127.0.0.1:43123/oauth/callback";

beforeAll(async () => {
  svc = await startService({
    env: {
      SVC_SERVER_ACCESS_TOKEN_TTL_SECONDS: "2",
      SVC_SERVER_AUTHORIZATION_CODE_TTL_SECONDS: "3",
      SVC_SERVER_DEVICE_CODE_TTL_SECONDS: "3",
      SVC_SERVER_DEVICE_POLL_INTERVAL_SECONDS: "1",
    },
  });
  await addUserWithPassword(svc.dataDir, EMAIL, PASSWORD);
  await addUserWithPassword(svc.dataDir, "throttled@example.com", PASSWORD);
});

afterAll(async () => {
  await svc?.kill();
});

function authorizeParams(challenge: string, overrides: Record<string, string | undefined> = {}) {
  return {
    response_type: "code",
    client_id: CLI_CLIENT_ID,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    scope: "api",
    state: "st-123",
    ...overrides,
  };
}

/** Signs in and approves in a fresh "browser"; returns the redirect back to the client. */
async function approve(challenge: string, decision = "approve", scope = "api"): Promise<URL> {
  const browser = new FormBrowser(svc.url);
  const consent = await browser.signInThrough(
    authorizePath(authorizeParams(challenge, { scope })),
    EMAIL,
    PASSWORD,
  );
  expect(consent.status).toBe(200);
  expect(consent.html).toContain("Allow access");
  const answer = await browser.post("/oauth/authorize", {
    ...FormBrowser.formFields(consent.html),
    decision,
  });
  expect(answer.status).toBe(303);
  return new URL(answer.location!);
}

/** Exchanges the code that came back to the client for tokens. */
const exchangeCode = (back: URL, verifier: string) =>
  oauthPost(svc.url, "/v1/oauth/token", {
    grant_type: "authorization_code",
    code: back.searchParams.get("code")!,
    redirect_uri: REDIRECT,
    client_id: CLI_CLIENT_ID,
    code_verifier: verifier,
  });

async function signIn(): Promise<Record<string, unknown>> {
  const { verifier, challenge } = pkcePair();
  const back = await approve(challenge);
  const exchanged = await exchangeCode(back, verifier);
  expect(exchanged.status).toBe(200);
  return exchanged.body;
}

const me = (token: string) =>
  api(svc, "GET", "/v3/users/me", { headers: { authorization: `Bearer ${token}` } });

const refresh = (refreshToken: string) =>
  oauthPost(svc.url, "/v1/oauth/token", {
    grant_type: "refresh_token",
    refresh_token: refreshToken,
    client_id: CLI_CLIENT_ID,
  });

describe("authorization code + PKCE", () => {
  it("signs in, approves, echoes state and exchanges the code for tokens that work on /v3", async () => {
    const { verifier, challenge } = pkcePair();
    const back = await approve(challenge);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get("state")).toBe("st-123");
    const exchanged = await exchangeCode(back, verifier);
    expect(exchanged.status).toBe(200);
    expect(exchanged.headers.get("cache-control")).toBe("no-store");
    expect(exchanged.body).toMatchObject({ token_type: "Bearer", expires_in: 2, scope: "api" });
    const accessToken = exchanged.body.access_token as string;
    const user = await me(accessToken);
    expect(user.status).toBe(200);
    expect(user.body.data.email).toBe(EMAIL);
    // Also as x-api-key, like an API key.
    expect((await api(svc, "GET", "/v3/users/me", { key: accessToken })).status).toBe(200);
  });

  it("grants api to a client that asks for openid profile email, and says so (RFC 6749 3.3)", async () => {
    const { verifier, challenge } = pkcePair();
    const back = await approve(challenge, "approve", "openid profile email");
    const exchanged = await exchangeCode(back, verifier);
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.scope).toBe("api");
    expect((await me(exchanged.body.access_token as string)).status).toBe(200);
  });

  it("stores codes and tokens only as hashes, and never logs them", async () => {
    const tokens = await signIn();
    const db = new BetterSqlite3(join(svc.dataDir, "svc.db"), { readonly: true });
    try {
      const hashes = db.prepare("select token_hash from oauth_tokens").all() as Array<{
        token_hash: string;
      }>;
      const sha = (value: unknown) => createHash("sha256").update(String(value)).digest("hex");
      expect(hashes.map((row) => row.token_hash)).toEqual(
        expect.arrayContaining([sha(tokens.access_token), sha(tokens.refresh_token)]),
      );
      const dump = JSON.stringify(db.prepare("select * from oauth_tokens").all());
      expect(dump).not.toContain(tokens.access_token);
      expect(dump).not.toContain(tokens.refresh_token);
      const passwords = JSON.stringify(db.prepare("select * from user_passwords").all());
      expect(passwords).not.toContain(PASSWORD);
      expect(passwords).toContain("scrypt$");
    } finally {
      db.close();
    }
    expect(svc.logs()).not.toContain(tokens.access_token as string);
    expect(svc.logs()).not.toContain(tokens.refresh_token as string);
    expect(svc.logs()).not.toContain(PASSWORD);
  });

  it("sends a denial back to the client as access_denied with the state", async () => {
    const back = await approve(pkcePair().challenge, "deny");
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("state")).toBe("st-123");
    expect(back.searchParams.get("code")).toBeNull();
  });

  it("refuses PKCE plain or a missing challenge with invalid_request at the redirect URI", async () => {
    const browser = new FormBrowser(svc.url);
    const { challenge } = pkcePair();
    for (const overrides of [
      { code_challenge_method: "plain" },
      { code_challenge_method: undefined },
      { code_challenge: undefined },
    ]) {
      const answer = await browser.get(authorizePath(authorizeParams(challenge, overrides)));
      expect(answer.status).toBe(303);
      const back = new URL(answer.location!);
      expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
      expect(back.searchParams.get("error")).toBe("invalid_request");
      expect(back.searchParams.get("state")).toBe("st-123");
    }
    const wrongType = await browser.get(
      authorizePath(authorizeParams(challenge, { response_type: "token" })),
    );
    expect(new URL(wrongType.location!).searchParams.get("error")).toBe(
      "unsupported_response_type",
    );
  });

  it("refuses a non-loopback redirect URI or unknown client without redirecting", async () => {
    const browser = new FormBrowser(svc.url);
    const { challenge } = pkcePair();
    for (const redirect of [
      "https://evil.example/oauth/callback",
      "http://localhost:43123/oauth/callback",
      "http://127.0.0.1:43123/other",
      "http://127.0.0.1/oauth/callback",
      "http://127.0.0.1.evil.example:80/oauth/callback",
    ]) {
      const answer = await browser.get(
        authorizePath(authorizeParams(challenge, { redirect_uri: redirect })),
      );
      expect(answer.status).toBe(400);
      expect(answer.location).toBeNull();
      expect(answer.html).toContain('<code id="error-code">invalid_request</code>');
    }
    const ipv6 = await browser.get(
      authorizePath(
        authorizeParams(challenge, { redirect_uri: "http://[::1]:43123/oauth/callback" }),
      ),
    );
    expect(ipv6.status).toBe(200);
    const unknownClient = await browser.get(
      authorizePath(authorizeParams(challenge, { client_id: "someone-else" })),
    );
    expect(unknownClient.status).toBe(400);
    expect(unknownClient.location).toBeNull();
  });

  it("refuses a missing or wrong code_verifier and a different redirect_uri", async () => {
    const { challenge } = pkcePair();
    const code = (await approve(challenge)).searchParams.get("code")!;
    const base = { grant_type: "authorization_code", code, client_id: CLI_CLIENT_ID };
    const missing = await oauthPost(svc.url, "/v1/oauth/token", {
      ...base,
      redirect_uri: REDIRECT,
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe("invalid_request");
    const wrong = await oauthPost(svc.url, "/v1/oauth/token", {
      ...base,
      redirect_uri: REDIRECT,
      code_verifier: pkcePair().verifier,
    });
    expect(wrong.body.error).toBe("invalid_grant");
    const otherRedirect = await oauthPost(svc.url, "/v1/oauth/token", {
      ...base,
      redirect_uri: "http://127.0.0.1:1/oauth/callback",
      code_verifier: pkcePair().verifier,
    });
    expect(otherRedirect.body.error).toBe("invalid_grant");
  });

  it("refuses a reused code with invalid_grant and revokes the tokens it gave", async () => {
    const { verifier, challenge } = pkcePair();
    const code = (await approve(challenge)).searchParams.get("code")!;
    const exchange = () =>
      oauthPost(svc.url, "/v1/oauth/token", {
        grant_type: "authorization_code",
        code,
        redirect_uri: REDIRECT,
        client_id: CLI_CLIENT_ID,
        code_verifier: verifier,
      });
    const first = await exchange();
    expect(first.status).toBe(200);
    // Used once, so the service has it cached: the revocation must still reach it at once.
    expect((await me(first.body.access_token as string)).status).toBe(200);
    const second = await exchange();
    expect(second.status).toBe(400);
    expect(second.body.error).toBe("invalid_grant");
    expect((await me(first.body.access_token as string)).status).toBe(401);
    expect((await refresh(first.body.refresh_token as string)).body.error).toBe("invalid_grant");
  });

  it("refuses a code once its short lifetime has passed", async () => {
    const { verifier, challenge } = pkcePair();
    const code = (await approve(challenge)).searchParams.get("code")!;
    const issuedAt = Date.now();
    // The service gives codes 3 s here; wait on the clock, then try the exchange.
    await waitFor("the code's lifetime to pass", async () =>
      Date.now() > issuedAt + 3_500 ? true : undefined,
    );
    const late = await oauthPost(svc.url, "/v1/oauth/token", {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
      client_id: CLI_CLIENT_ID,
      code_verifier: verifier,
    });
    expect(late.body).toMatchObject({ error: "invalid_grant" });
    expect(late.body.error_description).toMatch(/expired/);
  });
});

describe("tokens", () => {
  it("expires access tokens after the configured lifetime; refreshing gives a working pair", async () => {
    const tokens = await signIn();
    expect((await me(tokens.access_token as string)).status).toBe(200);
    const expired = await waitFor(
      "the access token to expire",
      async () => {
        const answer = await me(tokens.access_token as string);
        return answer.status === 401 ? answer : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 250 },
    );
    expect(expired.body.error.code).toBe("authentication_failed");
    expect(expired.headers.get("www-authenticate")).toContain("invalid_token");
    const refreshed = await refresh(tokens.refresh_token as string);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(tokens.refresh_token);
    expect((await me(refreshed.body.access_token as string)).status).toBe(200);
  });

  it("rotates refresh tokens, and reusing a rotated one revokes the whole family", async () => {
    const tokens = await signIn();
    const second = await refresh(tokens.refresh_token as string);
    expect(second.status).toBe(200);
    const third = await refresh(second.body.refresh_token as string);
    expect(third.status).toBe(200);
    expect((await me(third.body.access_token as string)).status).toBe(200);
    // An attacker (or a confused client) presents the first, already rotated, token.
    const reused = await refresh(tokens.refresh_token as string);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("invalid_grant");
    expect((await refresh(third.body.refresh_token as string)).body.error).toBe("invalid_grant");
    expect((await me(third.body.access_token as string)).status).toBe(401);
  });

  it("revokes on /v1/oauth/revoke (200 even for unknown tokens) and the access token then gets 401 at once", async () => {
    const tokens = await signIn();
    expect((await me(tokens.access_token as string)).status).toBe(200);
    const unknown = await oauthPost(svc.url, "/v1/oauth/revoke", {
      token: "svc_rt_notarealtoken",
      client_id: CLI_CLIENT_ID,
    });
    expect(unknown.status).toBe(200);
    const revoked = await oauthPost(svc.url, "/v1/oauth/revoke", {
      token: tokens.refresh_token as string,
      token_type_hint: "refresh_token",
      client_id: CLI_CLIENT_ID,
    });
    expect(revoked.status).toBe(200);
    expect((await me(tokens.access_token as string)).status).toBe(401);
    expect((await refresh(tokens.refresh_token as string)).body.error).toBe("invalid_grant");
  });

  it("answers RFC error codes for bad token requests", async () => {
    const noGrant = await oauthPost(svc.url, "/v1/oauth/token", { client_id: CLI_CLIENT_ID });
    expect(noGrant.body.error).toBe("invalid_request");
    const badGrant = await oauthPost(svc.url, "/v1/oauth/token", {
      grant_type: "password",
      client_id: CLI_CLIENT_ID,
    });
    expect(badGrant.body.error).toBe("unsupported_grant_type");
    const badClient = await oauthPost(svc.url, "/v1/oauth/token", {
      grant_type: "refresh_token",
      refresh_token: "x",
      client_id: "nope",
    });
    expect(badClient.status).toBe(401);
    expect(badClient.body.error).toBe("invalid_client");
    const json = await api(svc, "POST", "/v1/oauth/token", {
      body: { grant_type: "refresh_token", refresh_token: "svc_rt_x", client_id: CLI_CLIENT_ID },
    });
    expect(json.body).toMatchObject({ error: "invalid_grant" });
    const notAForm = await fetch(`${svc.url}/v1/oauth/token`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "grant_type=refresh_token",
    });
    expect(notAForm.status).toBe(400);
    expect(((await notAForm.json()) as { error: string }).error).toBe("invalid_request");
  });
});

describe("device authorization grant", () => {
  const startDevice = async (scope = "api") => {
    const started = await oauthPost(svc.url, "/v1/oauth/device/code", {
      client_id: CLI_CLIENT_ID,
      scope,
    });
    expect(started.status).toBe(200);
    return started.body as {
      device_code: string;
      user_code: string;
      verification_uri: string;
      verification_uri_complete: string;
      interval: number;
      expires_in: number;
    };
  };
  const poll = (deviceCode: string) =>
    oauthPost(svc.url, "/v1/oauth/token", {
      grant_type: DEVICE_CODE_GRANT,
      device_code: deviceCode,
      client_id: CLI_CLIENT_ID,
    });
  const decide = async (userCode: string, decision: string) => {
    const browser = new FormBrowser(svc.url);
    const entry = await browser.signInThrough("/device", EMAIL, PASSWORD);
    expect(entry.html).toContain("Connect a device");
    const confirm = await browser.post("/device", {
      ...FormBrowser.formFields(entry.html),
      user_code: userCode.toLowerCase().replace("-", " "),
    });
    expect(confirm.status).toBe(200);
    const done = await browser.post("/device/decision", {
      ...FormBrowser.formFields(confirm.html),
      decision,
    });
    expect(done.status).toBe(200);
    return done.html;
  };

  it("answers authorization_pending, then slow_down with 5 s more when polled too fast", async () => {
    const device = await startDevice();
    expect(device.user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
    expect(device.verification_uri).toBe(`${svc.url}/device`);
    expect(device.verification_uri_complete).toBe(
      `${svc.url}/device?user_code=${device.user_code}`,
    );
    expect(device.interval).toBe(1);
    expect((await poll(device.device_code)).body.error).toBe("authorization_pending");
    const tooFast = await poll(device.device_code);
    expect(tooFast.body.error).toBe("slow_down");
    expect(tooFast.body.error_description).toContain("6 s");
  });

  it("gives tokens once the person approves on /device, and only once", async () => {
    const device = await startDevice();
    expect(await decide(device.user_code, "approve")).toContain("Device connected");
    const granted = await poll(device.device_code);
    expect(granted.status).toBe(200);
    expect((await me(granted.body.access_token as string)).body.data.email).toBe(EMAIL);
    const again = await waitFor(
      "a second poll to be allowed",
      async () => {
        const answer = await poll(device.device_code);
        return answer.body.error === "slow_down" ? undefined : answer;
      },
      { intervalMs: 1_100 },
    );
    expect(again.body.error).toBe("invalid_grant");
  });

  it("narrows openid profile email to api on the device flow too", async () => {
    const device = await startDevice("openid profile email");
    expect(await decide(device.user_code, "approve")).toContain("Device connected");
    const granted = await poll(device.device_code);
    expect(granted.status).toBe(200);
    expect(granted.body.scope).toBe("api");
  });

  it("answers access_denied after the person denies", async () => {
    const device = await startDevice();
    expect(await decide(device.user_code, "deny")).toContain("Request denied");
    expect((await poll(device.device_code)).body.error).toBe("access_denied");
  });

  it("answers expired_token once the device code's lifetime has passed", async () => {
    const device = await startDevice();
    const expired = await waitFor(
      "the device code to expire",
      async () => {
        const answer = await poll(device.device_code);
        return answer.body.error === "expired_token" ? answer : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 1_100 },
    );
    expect(expired.status).toBe(400);
    // And the /device page no longer accepts it.
    const browser = new FormBrowser(svc.url);
    const entry = await browser.signInThrough("/device", EMAIL, PASSWORD);
    const refused = await browser.post("/device", {
      ...FormBrowser.formFields(entry.html),
      user_code: device.user_code,
    });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain("not right or has expired");
  });

  it("sends someone who is not signed in to the sign-in page, keeping the code", async () => {
    const device = await startDevice();
    const browser = new FormBrowser(svc.url);
    const page = await browser.get(`/device?user_code=${device.user_code}`);
    expect(page.html).toContain('action="/oauth/signin"');
    const fields = FormBrowser.formFields(page.html);
    expect(fields.next).toBe(`/device?user_code=${device.user_code}`);
  });
});

describe("sign-in page", () => {
  it("refuses a form without the CSRF token", async () => {
    const browser = new FormBrowser(svc.url);
    await browser.get("/device");
    const answer = await browser.post("/oauth/signin", {
      email: EMAIL,
      password: PASSWORD,
      next: "/device",
    });
    expect(answer.status).toBe(403);
    expect(answer.headers.get("set-cookie") ?? "").not.toContain("svc_session");
  });

  it("serves pages that cannot be framed, run no scripts and are not cached", async () => {
    const page = await new FormBrowser(svc.url).get("/device");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.html).not.toMatch(/<script|https?:\/\//);
  });

  it("throttles sign-in after five wrong passwords, even with the right one", async () => {
    const browser = new FormBrowser(svc.url);
    const page = await browser.get("/device");
    const fields = FormBrowser.formFields(page.html);
    const email = "throttled@example.com";
    for (let attempt = 0; attempt < 5; attempt++) {
      const wrong = await browser.post("/oauth/signin", {
        ...fields,
        email,
        password: "nope-nope",
      });
      expect(wrong.status).toBe(401);
      expect(wrong.html).toContain("not right");
    }
    const blocked = await browser.post("/oauth/signin", { ...fields, email, password: PASSWORD });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another account from the same address still signs in.
    const other = await browser.post("/oauth/signin", {
      ...fields,
      email: EMAIL,
      password: PASSWORD,
    });
    expect(other.status).toBe(303);
  });
});
