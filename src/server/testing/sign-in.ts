// Test support for the sign-in pages and OAuth endpoints: a tiny cookie-keeping HTTP "browser"
// that submits the real forms (with their CSRF tokens), PKCE pairs, token-endpoint calls, and
// creating an account with a password through the real `svc server users add --password`.
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { CLI_CLIENT_ID, type TokenResponse } from "../../shared/oauth";

const REPO = resolve(import.meta.dirname, "../../..");

/** Creates an account with a password via the CLI (password piped on stdin). */
export async function addUserWithPassword(
  dataDir: string,
  email: string,
  password: string,
  credits = 100,
): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      join(REPO, "bin/svc.js"),
      "server",
      "users",
      "add",
      email,
      "--password",
      "--credits",
      String(credits),
      "--data-dir",
      dataDir,
    ],
    { cwd: REPO, stdio: ["pipe", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (output += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (output += c));
  child.stdin.end(`${password}\n`);
  const code = await new Promise<number>((r) => child.on("exit", (c) => r(c ?? 1)));
  if (code !== 0) throw new Error(`users add failed (${code}): ${output}`);
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export interface PageResponse {
  status: number;
  location: string | null;
  html: string;
  headers: Headers;
}

/** Keeps cookies like a browser and never follows redirects, so tests see each step. */
export class FormBrowser {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly baseUrl: string) {}

  async get(path: string): Promise<PageResponse> {
    return this.send(path, { method: "GET" });
  }

  async post(path: string, form: Record<string, string>): Promise<PageResponse> {
    return this.send(path, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString(),
    });
  }

  private async send(path: string, init: RequestInit): Promise<PageResponse> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) {
      headers.set(
        "cookie",
        [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "),
      );
    }
    const response = await fetch(new URL(path, this.baseUrl), {
      ...init,
      headers,
      redirect: "manual",
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const index = pair!.indexOf("=");
      this.cookies.set(pair!.slice(0, index).trim(), pair!.slice(index + 1).trim());
    }
    return {
      status: response.status,
      location: response.headers.get("location"),
      html: await response.text(),
      headers: response.headers,
    };
  }

  /** Hidden fields and the CSRF token of the first form on a page. */
  static formFields(html: string): Record<string, string> {
    const fields: Record<string, string> = {};
    for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
      fields[match[1]!] = decodeEntities(match[2]!);
    }
    return fields;
  }

  /** GET the page, sign in on it when asked, and return the page after that. */
  async signInThrough(path: string, email: string, password: string): Promise<PageResponse> {
    const first = await this.get(path);
    if (!first.html.includes('action="/oauth/signin"')) return first;
    const fields = FormBrowser.formFields(first.html);
    const signedIn = await this.post("/oauth/signin", { ...fields, email, password });
    if (signedIn.status !== 303) {
      throw new Error(`sign-in answered ${signedIn.status}: ${signedIn.html.slice(0, 500)}`);
    }
    return this.get(signedIn.location!);
  }
}

function decodeEntities(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/** POST a form to an OAuth endpoint; returns status and parsed JSON. */
export async function oauthPost(
  baseUrl: string,
  path: string,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  };
}

export function authorizePath(params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) query.set(name, value);
  }
  return `/oauth/authorize?${query.toString()}`;
}

/**
 * A fresh `svc-cli` sign-in through the service's real pages and token endpoint, without a
 * browser: sign in, approve, exchange the code with its PKCE verifier.
 */
export async function tokensThroughPages(
  baseUrl: string,
  email: string,
  password: string,
): Promise<TokenResponse> {
  const { verifier, challenge } = pkcePair();
  const redirectUri = "http://127.0.0.1:40000/oauth/callback";
  const form = new FormBrowser(baseUrl);
  const consent = await form.signInThrough(
    authorizePath({
      response_type: "code",
      client_id: CLI_CLIENT_ID,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "s",
    }),
    email,
    password,
  );
  const back = await form.post("/oauth/authorize", {
    ...FormBrowser.formFields(consent.html),
    decision: "approve",
  });
  const code = new URL(back.location!).searchParams.get("code")!;
  const exchanged = await oauthPost(baseUrl, "/v1/oauth/token", {
    grant_type: "authorization_code",
    code,
    redirect_uri: redirectUri,
    client_id: CLI_CLIENT_ID,
    code_verifier: verifier,
  });
  return exchanged.body as unknown as TokenResponse;
}
