// Runs inside `dbus-run-session` with an unlocked gnome-keyring (started by
// src/core/keychain-secret-service.test.ts) and reports, as one JSON line on stdout, what the real
// keychain store did: `svc auth login --api-key` / `status` / `logout` with
// SVC_CREDENTIAL_STORE=keychain, and an OAuth credential stored and read back through
// openCredentialBackend. The test asserts on the report; this script only observes.
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { loadClientConfig } from "../config";
import { KEYCHAIN_SERVICE, loadKeytar, openCredentialBackend } from "../keychain";

const REPO = resolve(import.meta.dirname, "../../..");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function svc(args: string[], stdin = ""): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(REPO, "bin/svc.js"), ...args], {
      cwd: REPO,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", fail);
    child.once("exit", (code) => done({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

async function fileText(file: string): Promise<string | undefined> {
  return readFile(file, "utf8").catch(() => undefined);
}

const apiKey = process.env.SVC_TEST_API_KEY!;
const config = loadClientConfig();
const credentialsFile = join(config.configDir, "credentials");
const keytar = await loadKeytar();

const login = await svc(["auth", "login", "--api-key", "--json"], apiKey);
const afterLogin = {
  keychainEntry: await keytar.getPassword(KEYCHAIN_SERVICE, config.apiUrl),
  file: await fileText(credentialsFile),
};
const status = await svc(["auth", "status", "--json"]);
const logout = await svc(["auth", "logout", "--json"]);
const afterLogout = {
  keychainEntry: await keytar.getPassword(KEYCHAIN_SERVICE, config.apiUrl),
  file: await fileText(credentialsFile),
};

// The store itself: an OAuth credential written by one backend, read back by a fresh one.
const warnings: string[] = [];
const oauth = {
  access_token: "svc_at_keychainroundtripaccess",
  refresh_token: "svc_rt_keychainroundtriprefresh",
  expires_at: 2_000_000_000,
  scope: "api",
  token_type: "Bearer",
};
const writer = openCredentialBackend(config, { warn: (message) => warnings.push(message) });
await writer.update((current) => ({ ...current, oauth, user: { email: "kc@example.com" } }));
const reader = openCredentialBackend(config, { warn: (message) => warnings.push(message) });
const readBack = await reader.read();

process.stdout.write(
  `${JSON.stringify({
    login,
    status,
    logout,
    afterLogin,
    afterLogout,
    roundTrip: {
      readBack,
      source: reader.source,
      location: reader.location,
      keychainEntry: await keytar.getPassword(KEYCHAIN_SERVICE, config.apiUrl),
      file: await fileText(credentialsFile),
      warnings,
    },
  })}\n`,
);
