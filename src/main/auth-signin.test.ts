// The app's browser and device sign-in over the web transport (real HTTP + WebSocket) against a
// real service process: `auth.login` answers with the page URL or the code, the person's part is
// done on the service's own pages (through a cookie-keeping form client), and the outcome arrives
// as an `auth` event. Access tokens live 2 s here, so the app's API calls after sign-in cross
// expiries and refresh. Also: cancel, logout revoking on the service, and refusals.
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { WebSocket } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuthStatus, DesktopApi } from "../shared/ipc";
import { CLI_CLIENT_ID } from "../shared/oauth";
import { apiFromBridge, createWebBridge, type EventSocket } from "../renderer/transport";
import { startService, tempDir, type ServiceProcess } from "../server/testing/service-process";
import { FormBrowser, addUserWithPassword, oauthPost } from "../server/testing/sign-in";
import { startDesktopApp, type DesktopApp } from "./desktop-app";
import { createWebHost } from "./host";
import { ipcFailure, REPO } from "./testing/support";
import { startWebServer, type WebServer } from "./web-server";
import { waitFor } from "../shared/testing/wait-for";

const EMAIL = "barbara@example.com";
const PASSWORD = "liskov substitution";

let svc: ServiceProcess;
let app: DesktopApp;
let web: WebServer;
let api: DesktopApi;
let closeBridge: () => void;
let configDir: string;
const opened: string[] = [];
const authEvents: AuthStatus[] = [];

beforeAll(async () => {
  svc = await startService({
    env: {
      SVC_SERVER_ACCESS_TOKEN_TTL_SECONDS: "2",
      SVC_SERVER_DEVICE_POLL_INTERVAL_SECONDS: "1",
    },
  });
  await addUserWithPassword(svc.dataDir, EMAIL, PASSWORD);
  const base = await tempDir("svc-app-signin-");
  configDir = join(base, "config");
  app = await startDesktopApp({
    appRoot: REPO,
    version: "9.9.9",
    dataDir: join(base, "app"),
    env: { SVC_CONFIG_DIR: configDir, HOME: base },
    home: base,
    // Like web mode without a browser to open: the URL is recorded, and "not opened".
    host: createWebHost({
      folderRoot: () => base,
      open: async (target) => {
        opened.push(target);
        return false;
      },
    }),
    settingsDefaults: { service: svc.url, downloadsDir: join(base, "downloads") },
  });
  web = await startWebServer({ version: "9.9.9", router: app.router });
  const bridge = createWebBridge({
    baseUrl: web.origin,
    token: web.token,
    openSocket: (url, protocols) =>
      new WebSocket(url, protocols, { origin: web.origin }) as unknown as EventSocket,
  });
  api = apiFromBridge(bridge);
  api.on("auth", (status) => authEvents.push(status));
  await bridge.whenConnected();
  closeBridge = () => bridge.close();
});

afterAll(async () => {
  closeBridge?.();
  await web?.close();
  await app?.close();
  await svc?.kill();
});

/** The next `auth` event after `count` events, e.g. the one a finished sign-in sends. */
function authEventAfter(count: number): Promise<AuthStatus> {
  return waitFor("an auth event", async () => authEvents[count], { timeoutMs: 60_000 });
}

/** The person approves a device code on the service's /device page. */
async function approveDevice(userCode: string): Promise<void> {
  const person = new FormBrowser(svc.url);
  const entry = await person.signInThrough("/device", EMAIL, PASSWORD);
  const confirm = await person.post("/device", {
    ...FormBrowser.formFields(entry.html),
    user_code: userCode,
  });
  const done = await person.post("/device/decision", {
    ...FormBrowser.formFields(confirm.html),
    decision: "approve",
  });
  expect(done.html).toContain("Device connected");
}

describe("desktop sign-in over IPC", () => {
  it("signs in through the browser flow and announces it as an auth event", async () => {
    await api["auth.logout"]();
    const before = authEvents.length;
    const started = await api["auth.login"]({ method: "browser" });
    expect(started.signedIn).toBe(false);
    expect(started.signIn).toMatchObject({ method: "browser", browserOpened: false });
    const url = new URL(started.signIn!.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${svc.url}/oauth/authorize`);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(opened).toContain(started.signIn!.url);
    // A status read while waiting shows the same pending sign-in (e.g. after a reload).
    expect((await api["auth.status"]()).signIn?.url).toBe(started.signIn!.url);

    // The person signs in and allows access; the browser is sent back to the app's listener.
    const person = new FormBrowser(svc.url);
    const consent = await person.signInThrough(`${url.pathname}${url.search}`, EMAIL, PASSWORD);
    const back = await person.post("/oauth/authorize", {
      ...FormBrowser.formFields(consent.html),
      decision: "approve",
    });
    const landing = await fetch(back.location!);
    expect(await landing.text()).toContain("Signed in to svc");

    const done = await authEventAfter(before);
    expect(done).toMatchObject({
      signedIn: true,
      kind: "oauth",
      source: "credentials-file",
      user: { email: EMAIL },
    });
    expect(done.signIn).toBeUndefined();
    expect(done.signInError).toBeUndefined();
    const file = join(configDir, "credentials");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(await readFile(file, "utf8"));
    expect(stored.user.email).toBe(EMAIL);

    // The 2 s access token expires; the app's next calls refresh it and go on working.
    const expiresAt = stored.oauth.expires_at * 1000;
    await waitFor("the access token to expire", async () =>
      Date.now() > expiresAt + 300 ? true : undefined,
    );
    expect((await api["renders.list"]({ limit: 1 })).data).toEqual([]);
    expect((await api["auth.status"]()).user?.email).toBe(EMAIL);
    const refreshed = JSON.parse(await readFile(file, "utf8"));
    expect(refreshed.oauth.refresh_token).not.toBe(stored.oauth.refresh_token);
  });

  it("signs out by revoking on the service: the stored refresh token no longer works", async () => {
    const file = join(configDir, "credentials");
    const refreshToken = JSON.parse(await readFile(file, "utf8")).oauth.refresh_token as string;
    const status = await api["auth.logout"]();
    expect(status.signedIn).toBe(false);
    expect(JSON.parse(await readFile(file, "utf8")).oauth).toBeUndefined();
    const reuse = await oauthPost(svc.url, "/v1/oauth/token", {
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: CLI_CLIENT_ID,
    });
    expect(reuse.body.error).toBe("invalid_grant");
  });

  it("shows the device code while polling, and signs in once the code is approved", async () => {
    const before = authEvents.length;
    const started = await api["auth.login"]({ method: "device" });
    expect(started.signIn).toMatchObject({ method: "device", url: `${svc.url}/device` });
    expect(started.signIn!.userCode).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
    expect(started.signIn!.expiresAt).toBeGreaterThan(Date.now());
    await approveDevice(started.signIn!.userCode!);
    const done = await authEventAfter(before);
    expect(done).toMatchObject({ signedIn: true, kind: "oauth", user: { email: EMAIL } });
    await api["auth.logout"]();
  });

  it("cancels a waiting sign-in: the code is gone and approving it later signs nothing in", async () => {
    const started = await api["auth.login"]({ method: "device" });
    const cancelled = await api["auth.cancel"]();
    expect(cancelled.signIn).toBeUndefined();
    expect(cancelled.signedIn).toBe(false);
    const before = authEvents.length;
    await approveDevice(started.signIn!.userCode!);
    // A poller still running would see the approval at its next poll (every 1 s here).
    const approvedAt = Date.now();
    await waitFor("three poll intervals to pass", async () =>
      Date.now() > approvedAt + 3_000 ? true : undefined,
    );
    expect(authEvents.slice(before)).toEqual([]);
    expect((await api["auth.status"]()).signedIn).toBe(false);
  });

  it("drops a waiting sign-in when the service setting changes", async () => {
    const started = await api["auth.login"]({ method: "device" });
    expect(started.signIn).toBeDefined();
    await api["settings.set"]({ service: "local" });
    try {
      expect((await api["auth.status"]()).signIn).toBeUndefined();
    } finally {
      await api["settings.set"]({ service: svc.url });
    }
    expect((await api["auth.status"]()).signIn).toBeUndefined();
  });

  it("refuses unknown fields, and browser sign-in while the app uses the local service", async () => {
    const invalid = await ipcFailure(
      api["auth.login"]({ method: "browser", apiKey: "svc_key_x" } as never),
    );
    expect(invalid.code).toBe("invalid_input");
    await api["settings.set"]({ service: "local" });
    try {
      const local = await ipcFailure(api["auth.login"]({ method: "device" }));
      expect(local.code).toBe("local_service_signed_in");
      expect(local.hint).toMatch(/Settings/);
    } finally {
      await api["settings.set"]({ service: svc.url });
    }
  });
});
