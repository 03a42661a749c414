// Sign-in end to end: the real `svc auth login` (browser and --device) in a child process on a
// pseudo-terminal (util-linux `script`, as a person's terminal would be), a real service
// process, and the engine's Chromium signing in through the service's pages. The service gives
// access tokens 2 s, so every command after sign-in also crosses expiries and refreshes.
import { spawn, type ChildProcess } from "node:child_process";
import { readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Page } from "@playwright/test";
import {
  api,
  runCli,
  startService,
  tempDir,
  type ServiceProcess,
} from "../src/server/testing/service-process";
import { addUserWithPassword } from "../src/server/testing/sign-in";
import { expect, test } from "./fixtures";
import { waitFor } from "../src/shared/testing/wait-for";

const REPO = resolve(import.meta.dirname, "..");
const EMAIL = "linus@example.com";
const PASSWORD = "sign-in end to end";

let svc: ServiceProcess;

test.beforeAll(async () => {
  svc = await startService({
    jobs: 1,
    env: {
      SVC_SERVER_ACCESS_TOKEN_TTL_SECONDS: "2",
      SVC_SERVER_DEVICE_POLL_INTERVAL_SECONDS: "1",
    },
  });
  await addUserWithPassword(svc.dataDir, EMAIL, PASSWORD, 1000);
});

test.afterAll(async () => {
  await svc?.kill();
});

/** The environment of a person's shell: this service, a private config dir, no CI, no SSH. */
async function userEnv(): Promise<NodeJS.ProcessEnv> {
  const home = await tempDir("svc-e2e-home-");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    SVC_CONFIG_DIR: join(home, ".svc"),
    SVC_API_URL: svc.url,
    BROWSER: "none",
  };
  for (const name of [
    "CI",
    "SSH_CONNECTION",
    "SSH_CLIENT",
    "SSH_TTY",
    "SVC_API_KEY",
    "SVC_ALIAS_API_KEY",
  ]) {
    delete env[name];
  }
  return env;
}

interface TerminalRun {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number>;
}

/** Runs `svc ARGS` on a pseudo-terminal, so stdin and stdout are TTYs as for a person. */
function runOnTerminal(args: string[], env: NodeJS.ProcessEnv): TerminalRun {
  const command = [process.execPath, join(REPO, "bin/svc.js"), ...args]
    .map((part) => `'${part.replace(/'/g, "'\\''")}'`)
    .join(" ");
  const child = spawn("script", ["-qefc", command, "/dev/null"], {
    cwd: REPO,
    env,
    // stdin stays open: `script` ends the session when its input ends.
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  const exited = new Promise<number>((done) => child.once("exit", (code) => done(code ?? 1)));
  return { child, output: () => output, exited };
}

async function outputMatching(run: TerminalRun, pattern: RegExp): Promise<RegExpExecArray> {
  return waitFor(
    `output matching ${pattern}`,
    async () => {
      const match = pattern.exec(run.output());
      if (match) return match;
      if (run.child.exitCode !== null) throw new Error(`svc exited early:\n${run.output()}`);
      return undefined;
    },
    { timeoutMs: 60_000 },
  );
}

async function signInOnPage(page: Page): Promise<void> {
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
}

async function statusJson(env: NodeJS.ProcessEnv) {
  const status = await runCli(["auth", "status", "--json"], env as Record<string, string>);
  expect(status.code, status.stderr + status.stdout).toBe(0);
  return JSON.parse(status.stdout);
}

test("svc auth login signs in through a real browser and stores tokens 0600", async ({
  browser,
}) => {
  const env = await userEnv();
  const login = runOnTerminal(["auth", "login"], env);
  const [url] = await outputMatching(
    login,
    /http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?[\w.~%&=+*-]+/,
  );
  const page = await browser.newPage();
  await page.goto(url);
  await signInOnPage(page);
  await page.getByRole("button", { name: "Allow" }).click();
  await expect(page.locator("h1")).toHaveText("Signed in to svc");
  expect(await login.exited, login.output()).toBe(0);
  expect(login.output()).toContain(`Signed in as ${EMAIL}`);
  await page.close();

  const file = join(env.SVC_CONFIG_DIR!, "credentials");
  expect((await stat(file)).mode & 0o777).toBe(0o600);
  const stored = JSON.parse(await readFile(file, "utf8"));
  expect(stored.oauth.access_token).toMatch(/^svc_at_/);
  expect(stored.user.email).toBe(EMAIL);

  const status = await statusJson(env);
  expect(status).toMatchObject({ kind: "oauth", user: { email: EMAIL } });
});

test("svc auth login --device signs in when Chromium enters the code on /device", async ({
  browser,
}) => {
  const env = await userEnv();
  const login = runOnTerminal(["auth", "login", "--device"], env);
  const [, verificationUri] = await outputMatching(
    login,
    /open (http:\/\/\S+\/device) in any browser/,
  );
  const [, userCode] = await outputMatching(login, /^\s+([A-Z]{4}-[A-Z]{4})\s*$/m);
  const page = await browser.newPage();
  await page.goto(verificationUri!);
  await signInOnPage(page);
  await page.getByLabel("Code").fill(userCode!);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByRole("button", { name: "Allow" }).click();
  await expect(page.getByText("Device connected")).toBeVisible();
  expect(await login.exited, login.output()).toBe(0);
  await page.close();
  expect((await statusJson(env)).user.email).toBe(EMAIL);
});

test("refuses browser sign-in over SSH and device sign-in in CI, pointing elsewhere", async () => {
  const env = await userEnv();
  const overSsh = runOnTerminal(["auth", "login"], {
    ...env,
    SSH_CONNECTION: "10.0.0.1 5000 10.0.0.2 22",
  });
  expect(await overSsh.exited).toBe(2);
  expect(overSsh.output()).toContain("--device");
  const inCi = await runCli(["auth", "login", "--device"], {
    ...(env as Record<string, string>),
    CI: "true",
  });
  expect(inCi.code).toBe(2);
  expect(inCi.stderr).toMatch(/CI/);
});

test("keeps a long svc cloud render working across 2-second token expiries, then logout revokes", async ({
  browser,
}) => {
  const env = await userEnv();
  const login = runOnTerminal(["auth", "login", "--device"], env);
  const [, verificationUri] = await outputMatching(
    login,
    /open (http:\/\/\S+\/device) in any browser/,
  );
  const [, userCode] = await outputMatching(login, /^\s+([A-Z]{4}-[A-Z]{4})\s*$/m);
  const page = await browser.newPage();
  await page.goto(`${verificationUri}?user_code=${userCode}`);
  await signInOnPage(page);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByRole("button", { name: "Allow" }).click();
  expect(await login.exited, login.output()).toBe(0);
  await page.close();

  const file = join(env.SVC_CONFIG_DIR!, "credentials");
  const before = JSON.parse(await readFile(file, "utf8"));
  const output = join(await tempDir("svc-e2e-out-"), "video.mp4");
  const render = await runCli(
    [
      "cloud",
      "render",
      join(REPO, "examples/hello-world"),
      "--quality",
      "draft",
      // 10 fps: still ~10 s of polling across five 2-second tokens, without a 150-frame render
      // that a busy machine stretches past the test's time limit.
      "--fps",
      "10",
      "--poll-interval",
      "1",
      "-o",
      output,
      "--json",
    ],
    env as Record<string, string>,
  );
  expect(render.code, render.stderr + render.stdout).toBe(0);
  expect((await stat(output)).size).toBeGreaterThan(1000);

  // Every 401 the CLI met was followed by exactly one refresh and one replay.
  const lines = svc
    .logs()
    .split("\n")
    .filter((line) => line.includes('"request completed"'));
  const unauthorized = lines.filter((line) => line.includes('"statusCode":401')).length;
  const refreshed = JSON.parse(await readFile(file, "utf8"));
  expect(refreshed.oauth.refresh_token).not.toBe(before.oauth.refresh_token);
  expect(unauthorized).toBeGreaterThan(0);
  for (let index = 0; index < lines.length; index++) {
    if (!lines[index]!.includes('"statusCode":401')) continue;
    expect(lines[index + 1]).toContain('"url":"/v1/oauth/token"');
    expect(lines[index + 1]).toContain('"statusCode":200');
    expect(lines[index + 2]).toContain('"statusCode":20');
  }

  const accessToken = refreshed.oauth.access_token as string;
  const logout = await runCli(["auth", "logout", "--json"], env as Record<string, string>);
  expect(logout.code, logout.stderr).toBe(0);
  expect(JSON.parse(logout.stdout)).toMatchObject({ revoked: true });
  const after = JSON.parse(await readFile(file, "utf8"));
  expect(after.oauth).toBeUndefined();
  const old = await api(svc, "GET", "/v3/users/me", {
    headers: { authorization: `Bearer ${accessToken}` },
  });
  expect(old.status).toBe(401);
});
