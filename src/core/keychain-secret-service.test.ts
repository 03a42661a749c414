// The OS keychain store against a real secret service: gnome-keyring under its own
// `dbus-run-session`, in a fresh HOME, unlocked with a throwaway password (an empty one would ask
// through a GUI prompt). Inside it, keychain-session.ts runs the real `svc auth login --api-key`,
// `status` and `logout` with SVC_CREDENTIAL_STORE=keychain against a real service, and stores an
// OAuth credential through the store and reads it back. The secret must be in the keychain and
// never in the credentials file. Needs keytar (optional dependency, built against libsecret) and
// gnome-keyring + dbus from apt: in CI a missing piece fails the test; elsewhere it is skipped
// with what to install.
import { spawn } from "node:child_process";
import { access } from "node:fs/promises";
import { delimiter, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startService, tempDir, type ServiceProcess } from "../server/testing/service-process";
import { loadKeytar } from "./keychain";

const REPO = resolve(import.meta.dirname, "../..");
const SESSION_SCRIPT = join(import.meta.dirname, "testing", "keychain-session.ts");

async function onPath(command: string): Promise<boolean> {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    if (
      await access(join(dir, command)).then(
        () => true,
        () => false,
      )
    )
      return true;
  }
  return false;
}

async function missingPieces(): Promise<string[]> {
  const missing: string[] = [];
  if (
    !(await loadKeytar().then(
      () => true,
      () => false,
    ))
  ) {
    missing.push("keytar (npm ci with libsecret-1-dev installed, so it builds)");
  }
  for (const command of ["dbus-run-session", "gnome-keyring-daemon"]) {
    if (!(await onPath(command))) missing.push(`${command} (apt-get install gnome-keyring dbus)`);
  }
  return missing;
}

const missing = await missingPieces();
const inCi = !/^(|0|false|no|off)$/i.test((process.env.CI ?? "").trim());
const runnable = missing.length === 0;
if (!runnable && !inCi) {
  process.stderr.write(
    `keychain-secret-service.test.ts skipped: missing ${missing.join(", ")}. ` +
      "Install with: sudo apt-get install libsecret-1-dev gnome-keyring dbus && npm ci\n",
  );
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Report = any;

/** Runs keychain-session.ts in a new D-Bus session with an unlocked gnome-keyring. */
function runInKeyringSession(env: NodeJS.ProcessEnv): Promise<Run> {
  const script = [
    'eval "$(printf %s "$SVC_TEST_KEYRING_PASSWORD" | gnome-keyring-daemon --unlock --components=secrets)"',
    "export GNOME_KEYRING_CONTROL",
    'exec "$0" "$@"',
  ].join("; ");
  return new Promise((done, fail) => {
    const child = spawn(
      "dbus-run-session",
      ["--", "sh", "-c", script, process.execPath, "--import", "tsx", SESSION_SCRIPT],
      { cwd: REPO, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", fail);
    child.once("exit", (code) => done({ code: code ?? 1, stdout, stderr }));
  });
}

describe("the OS keychain store under a real secret service", () => {
  let svc: ServiceProcess | undefined;

  beforeAll(async () => {
    if (runnable) svc = await startService();
  });

  afterAll(async () => {
    await svc?.kill();
  });

  it.runIf(!runnable && inCi)("has keytar, gnome-keyring and dbus-run-session in CI", () => {
    expect.fail(
      `CI must run the keychain test, but these are missing: ${missing.join(", ")}. ` +
        "Install libsecret-1-dev gnome-keyring dbus with apt-get before npm ci (.ci/run does).",
    );
  });

  it.runIf(runnable)(
    "keeps an API key from svc auth login and an OAuth sign-in in the keychain, never in the file",
    async () => {
      const home = await tempDir("svc-keyring-home-");
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: home,
        XDG_DATA_HOME: join(home, ".local", "share"),
        XDG_CONFIG_HOME: join(home, ".config"),
        XDG_RUNTIME_DIR: home,
        SVC_CONFIG_DIR: join(home, ".svc"),
        SVC_API_URL: svc!.url,
        SVC_CREDENTIAL_STORE: "keychain",
        SVC_TEST_API_KEY: svc!.apiKey,
        SVC_TEST_KEYRING_PASSWORD: "svc-keyring-test",
        ...(process.env.SVC_CHROMIUM_PATH
          ? { SVC_CHROMIUM_PATH: process.env.SVC_CHROMIUM_PATH }
          : {}),
      };
      const run = await runInKeyringSession(env);
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout.trim().split("\n").pop()!) as Report;
      const key = svc!.apiKey;

      expect(report.login.code, report.login.stderr).toBe(0);
      expect(JSON.parse(report.login.stdout)).toMatchObject({
        signed_in: true,
        file: "the OS keychain",
      });
      expect(report.login.stderr).not.toMatch(/keychain is not available/);
      expect(JSON.parse(report.afterLogin.keychainEntry)).toMatchObject({ api_key: key });
      expect(report.afterLogin.file ?? "").not.toContain(key);

      expect(report.status.code, report.status.stderr).toBe(0);
      expect(JSON.parse(report.status.stdout)).toMatchObject({
        source: "keychain",
        kind: "api_key",
        user: { email: expect.stringContaining("@") },
      });

      expect(report.logout.code, report.logout.stderr).toBe(0);
      expect(JSON.parse(report.logout.stdout)).toMatchObject({ signed_out: true });
      expect(report.afterLogout.keychainEntry ?? "").not.toContain(key);

      const { roundTrip } = report;
      expect(roundTrip.warnings).toEqual([]);
      expect(roundTrip.source).toBe("keychain");
      expect(roundTrip.location).toBe("the OS keychain");
      expect(roundTrip.readBack.oauth.refresh_token).toBe("svc_rt_keychainroundtriprefresh");
      expect(roundTrip.readBack.user).toEqual({ email: "kc@example.com" });
      expect(roundTrip.keychainEntry).toContain("svc_rt_keychainroundtriprefresh");
      expect(roundTrip.file ?? "").not.toContain("svc_rt_keychainroundtriprefresh");
      expect(roundTrip.file ?? "").not.toContain("svc_at_keychainroundtripaccess");
    },
    120_000,
  );
});
