// Refresh tokens rotate and a reused one revokes the whole sign-in, so requests that find the
// access token expired at the same time must spend the refresh token once: in one process the
// refresh is single flight, across processes the lock file next to the credentials file
// serialises it and the waiter takes the tokens the first one stored. Against a real service
// whose access tokens live 10 minutes: the stored expiry is moved into the past, so the client
// refreshes, and after one refresh the new token is fresh for everyone else.
import { readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_CLIENT_ID } from "../shared/oauth";
import {
  runCli,
  startService,
  tempDir,
  type ServiceProcess,
} from "../server/testing/service-process";
import { addUserWithPassword, oauthPost, tokensThroughPages } from "../server/testing/sign-in";
import { ApiClient } from "./api-client";
import { withCredentialLock } from "./credential-lock";
import { CredentialStore, type OAuthTokens } from "./credentials";
import { FileCredentialBackend } from "./keychain";
import { OAuthSession, storedTokens } from "./oauth";
import { waitFor } from "../shared/testing/wait-for";

const EMAIL = "ada@example.com";
const PASSWORD = "a long and good password";
let svc: ServiceProcess;

beforeAll(async () => {
  svc = await startService({ env: { SVC_SERVER_ACCESS_TOKEN_TTL_SECONDS: "600" } });
  await addUserWithPassword(svc.dataDir, EMAIL, PASSWORD);
});

afterAll(async () => {
  await svc?.kill();
});

/** A credentials file holding a sign-in whose access token the client believes has expired. */
async function expiredSignIn(): Promise<{ backend: FileCredentialBackend; stored: OAuthTokens }> {
  const backend = new FileCredentialBackend(
    new CredentialStore(join(await tempDir("svc-refresh-lock-"), "config")),
  );
  const grants = tokenGrants();
  const stored = {
    ...storedTokens(await tokensThroughPages(svc.url, EMAIL, PASSWORD)),
    expires_at: Date.now() / 1000 - 10,
  };
  await backend.update(() => ({ oauth: stored }));
  // The service's log reaches the test a moment after its answer: count from after this grant.
  await waitFor("the service to log the sign-in's token grant", () =>
    tokenGrants() > grants ? true : undefined,
  );
  return { backend, stored };
}

/** Token grants (any grant type) the service has logged as answered 200 so far. */
function tokenGrants(): number {
  return svc
    .logs()
    .split("\n")
    .filter((line) => line.includes('"url":"/v1/oauth/token"') && line.includes('"statusCode":200'))
    .length;
}

interface CountingProxy {
  url: string;
  /** Requests by "METHOD /path" and by "METHOD /path STATUS", counted as they are answered. */
  count(kind: string): number;
  close(): Promise<void>;
}

/** A plain HTTP proxy in front of the service that counts requests the moment they complete. */
async function startCountingProxy(upstream: string): Promise<CountingProxy> {
  const counts = new Map<string, number>();
  const bump = (kind: string) => counts.set(kind, (counts.get(kind) ?? 0) + 1);
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    bump(`${req.method} ${path}`);
    const target = new URL(req.url ?? "/", upstream);
    const forward = request(
      target,
      { method: req.method, headers: { ...req.headers, host: target.host } },
      (answer) => {
        bump(`${req.method} ${path} ${answer.statusCode}`);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.once("error", () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    count: (kind) => counts.get(kind) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The sign-in is still alive: the stored access token works and its refresh token rotates. */
async function expectFamilyAlive(backend: FileCredentialBackend): Promise<void> {
  const oauth = (await backend.read()).oauth!;
  const me = await new ApiClient({ baseUrl: svc.url, credential: oauth.access_token }).me();
  expect(me.email).toBe(EMAIL);
  const again = await oauthPost(svc.url, "/v1/oauth/token", {
    grant_type: "refresh_token",
    refresh_token: oauth.refresh_token,
    client_id: CLI_CLIENT_ID,
  });
  expect(again.status, JSON.stringify(again.body)).toBe(200);
}

describe("refreshing an expired sign-in from several places at once", () => {
  it("spends the refresh token once for parallel requests in one process", async () => {
    const { backend, stored } = await expiredSignIn();
    const before = tokenGrants();
    const first = new OAuthSession(backend, svc.url);
    const second = new OAuthSession(backend, svc.url);
    const tokens = await Promise.all([
      first.accessToken(),
      second.accessToken(),
      first.accessToken(),
      second.forceRefresh(stored.access_token),
    ]);
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).not.toBe(stored.access_token);
    expect(first.refreshCount + second.refreshCount).toBe(1);
    expect((await backend.read()).oauth?.access_token).toBe(tokens[0]);
    await expectFamilyAlive(backend);
    // The service logs in order: once the check's own grant is logged, every earlier one is too,
    // so the count is final: one refresh for the four calls, one for the check.
    await waitFor("the service to log the check's grant", () =>
      tokenGrants() >= before + 2 ? true : undefined,
    );
    expect(tokenGrants()).toBe(before + 2);
  });

  it("spends the refresh token once for three svc processes that all got a 401", async () => {
    // The stored access token is not valid on the service (so each process gets a 401 and must
    // refresh) but not yet expired as far as the client knows (so nobody refreshes before that).
    const { backend, stored } = await expiredSignIn();
    await backend.update((current) => ({
      ...current,
      oauth: { ...stored, access_token: "svc_at_notvalidonthisservice", expires_at: 4e9 },
    }));
    // The processes talk through a proxy that counts as requests pass (the log is buffered).
    const proxy = await startCountingProxy(svc.url);
    try {
      const env = { SVC_API_URL: proxy.url, SVC_CONFIG_DIR: backend.store.dir, SVC_API_KEY: "" };
      // The test holds the lock until all three have been refused, so they wait for it together.
      const runs = await withCredentialLock(backend.lockFile, async () => {
        const started = [1, 2, 3].map(() => runCli(["auth", "status", "--json"], env));
        await waitFor(
          "all three to be refused",
          async () => {
            if (proxy.count("POST /v1/oauth/token") > 0) {
              throw new Error("a process refreshed while the lock was held");
            }
            return proxy.count("GET /v3/users/me 401") >= 3 ? true : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 20 },
        );
        return started;
      }).then((started) => Promise.all(started));
      for (const run of runs) {
        expect(run.code, run.stderr).toBe(0);
        expect(JSON.parse(run.stdout)).toMatchObject({ kind: "oauth", user: { email: EMAIL } });
      }
      expect(proxy.count("POST /v1/oauth/token 200")).toBe(1);
      expect(proxy.count("POST /v1/oauth/token")).toBe(1);
    } finally {
      await proxy.close();
    }
    const after = (await backend.read()).oauth!;
    expect(after.refresh_token).not.toBe(stored.refresh_token);
    await expect(stat(backend.lockFile)).rejects.toMatchObject({ code: "ENOENT" });
    await expectFamilyAlive(backend);
  });

  it("takes over a lock left behind by a process that died mid-refresh", async () => {
    const { backend } = await expiredSignIn();
    await writeFile(backend.lockFile, "4242 died", { mode: 0o600 });
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(backend.lockFile, longAgo, longAgo);
    const env = { SVC_API_URL: svc.url, SVC_CONFIG_DIR: backend.store.dir, SVC_API_KEY: "" };
    const run = await runCli(["auth", "status", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    await expect(stat(backend.lockFile)).rejects.toMatchObject({ code: "ENOENT" });
    await expectFamilyAlive(backend);
  });
});

describe("the credential lock", () => {
  it("lets one holder in at a time and the next one in when it lets go", async () => {
    const lockFile = join(await tempDir("svc-lock-"), "config", "credentials.lock");
    const order: string[] = [];
    let inside = 0;
    const hold = (name: string) =>
      withCredentialLock(lockFile, async () => {
        inside++;
        order.push(`${name} in (${inside} inside)`);
        // While held, the lock file exists and names this process.
        expect(await readFile(lockFile, "utf8")).toMatch(new RegExp(`^${process.pid} `));
        await new Promise((resolve) => setImmediate(resolve));
        inside--;
        order.push(`${name} out`);
      });
    await Promise.all([hold("a"), hold("b"), hold("c")]);
    expect(order.filter((line) => line.includes("in ("))).toEqual([
      expect.stringContaining("(1 inside)"),
      expect.stringContaining("(1 inside)"),
      expect.stringContaining("(1 inside)"),
    ]);
    await expect(stat(lockFile)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("waits for a lock held by someone else that is not stale, then takes it", async () => {
    const lockFile = join(await tempDir("svc-lock-"), "credentials.lock");
    await writeFile(lockFile, "another process", { mode: 0o600, flag: "wx" });
    let entered = false;
    let busy = 0;
    const waiting = withCredentialLock(lockFile, async () => (entered = true), {
      pollMs: 10,
      onBusy: () => busy++,
    });
    await waitFor("the waiter to find the lock held a few times", async () =>
      busy >= 5 ? true : undefined,
    );
    expect(entered).toBe(false);
    await rm(lockFile);
    await waiting;
    expect(entered).toBe(true);
  });
});
