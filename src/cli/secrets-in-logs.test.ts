// Secrets never reach a log line, the CLI's output or an error body. The whole flow runs for
// real with the service logging at debug: sign-in with an API key, an OAuth sign-in through the
// pages and a token refresh by the CLI, a render uploaded through its signed URL, rendered,
// downloaded, and delivered to an HTTPS webhook with its signature; plus the refusals that carry
// a secret in the request (a wrong key, a tampered signed URL, a used refresh token). Then every
// secret seen on the wire is looked for in everything the service and the CLI wrote, and in what
// GET /metrics serves.
import { readFile, writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CLI_CLIENT_ID, OAUTH_PATHS } from "../shared/oauth";
import { startHttpsReceiver, type Receiver } from "../server/testing/https-receiver";
import { api, startService, type ServiceProcess } from "../server/testing/service-process";
import { addUserWithPassword, oauthPost, tokensThroughPages } from "../server/testing/sign-in";
import { runCli, tempDir, tinyComposition, writeProject } from "./testing/cloud-service";

const EMAIL = "secrets@example.com";
const PASSWORD = "correct horse battery staple";

let work: string;
let receiver: Receiver;
let service: ServiceProcess;

beforeAll(async () => {
  work = await tempDir();
  receiver = await startHttpsReceiver(work);
  service = await startService({
    dataDir: join(work, "data"),
    jobs: 1,
    env: {
      SVC_SERVER_LOG_LEVEL: "debug",
      NODE_EXTRA_CA_CERTS: receiver.certFile,
      SVC_SERVER_ALLOW_PRIVATE_TARGETS: "1",
    },
  });
  await addUserWithPassword(service.dataDir, EMAIL, PASSWORD, 100);
});

afterAll(async () => {
  await service?.kill();
  await receiver?.close();
});

it("keeps every key, token, signature, password and webhook secret out of logs, CLI output and error bodies", async () => {
  const written: string[] = [];
  const secrets = new Set<string>([service.apiKey, service.webhookSecret, PASSWORD]);
  const cli = async (args: string[], home: string, stdin?: string) => {
    const result = await runCli(args, {
      cwd: work,
      env: { HOME: home, SVC_API_URL: service.url },
      stdin,
    });
    written.push(result.stdout, result.stderr);
    return result;
  };

  // Sign-in with the API key (piped, as CI does).
  const keyHome = join(work, "key-home");
  const login = await cli(["auth", "login", "--api-key"], keyHome, `${service.apiKey}\n`);
  expect(login.code, login.stderr).toBe(0);

  // OAuth: sign in through the pages, then the CLI refreshes the tokens.
  const tokens = await tokensThroughPages(service.url, EMAIL, PASSWORD);
  secrets.add(tokens.access_token).add(tokens.refresh_token!);
  const oauthHome = join(work, "oauth-home");
  await mkdir(join(oauthHome, ".svc"), { recursive: true, mode: 0o700 });
  await writeFile(
    join(oauthHome, ".svc/credentials"),
    JSON.stringify({
      oauth: {
        access_token: tokens.access_token,
        refresh_token: tokens.refresh_token,
        expires_at: Math.floor(Date.now() / 1000) + 3600,
        scope: tokens.scope,
        token_type: "Bearer",
      },
    }),
    { mode: 0o600 },
  );
  const refreshed = await cli(["auth", "refresh"], oauthHome);
  expect(refreshed.code, refreshed.stderr).toBe(0);
  const stored = JSON.parse(await readFile(join(oauthHome, ".svc/credentials"), "utf8"));
  expect(stored.oauth.refresh_token).not.toBe(tokens.refresh_token);
  secrets.add(stored.oauth.access_token).add(stored.oauth.refresh_token);

  // A render with the refreshed sign-in: upload through the signed URL, render, webhook, download.
  const project = await writeProject(join(work, "project"), {
    "index.html": tinyComposition("secret-free"),
  });
  const rendered = await cli(
    [
      "cloud",
      "render",
      project,
      "--fps",
      "5",
      "--quality",
      "draft",
      "--poll-interval",
      "1",
      "--callback-url",
      `${receiver.url}/hook`,
      "--json",
    ],
    oauthHome,
  );
  expect(rendered.code, rendered.stderr).toBe(0);
  // --json prints the render record the user asked for, signed video URL included: data, not a
  // log line. Its progress and messages (stderr) are checked with the rest.
  written.splice(written.indexOf(rendered.stdout), 1);
  const renderId = JSON.parse(rendered.stdout).render_id as string;
  const record = await api(service, "GET", `/v3/svc/renders/${renderId}`, {
    key: stored.oauth.access_token as string,
  });
  expect(record.body.data.status).toBe("completed");
  for (const url of [record.body.data.video_url, record.body.data.thumbnail_url]) {
    secrets.add(new URL(url).searchParams.get("sig")!);
  }
  const delivery = await waitForDelivery(renderId);
  const signature = String(delivery.headers["svc-signature"]);
  secrets.add(/v1=([0-9a-f]+)/.exec(signature)![1]!);

  // Refusals of requests that carry a secret.
  const created = await api(service, "POST", "/v3/assets", {
    key: service.apiKey,
    body: { filename: "p.zip", content_type: "application/zip", size_bytes: 10 },
  });
  const uploadUrl = new URL(created.body.data.upload_url as string);
  secrets.add(uploadUrl.searchParams.get("sig")!);
  uploadUrl.searchParams.set("sig", `${uploadUrl.searchParams.get("sig")}0`);
  const tampered = await fetch(uploadUrl, { method: "PUT", body: "0123456789" });
  expect(tampered.status).toBe(403);
  written.push(await tampered.text());
  const wrongKey = `${service.apiKey.slice(0, -4)}abcd`;
  secrets.add(wrongKey);
  const refused = await api(service, "GET", "/v3/users/me", { key: wrongKey });
  expect(refused.status).toBe(401);
  written.push(JSON.stringify(refused.body));
  const reused = await oauthPost(service.url, OAUTH_PATHS.token, {
    grant_type: "refresh_token",
    refresh_token: tokens.refresh_token!,
    client_id: CLI_CLIENT_ID,
  });
  expect(reused.status).toBe(400);
  written.push(JSON.stringify(reused.body));

  // The metrics a scraper reads (no key needed) hold no secret either.
  const metrics = await fetch(`${service.url}/metrics`);
  expect(metrics.status).toBe(200);
  const metricsText = await metrics.text();
  expect(metricsText).toContain("svc_http_requests_total");
  written.push(metricsText);
  const logs = service.logs();
  // Request logging was on: a line for each request, the signed upload among them.
  expect(logs).toContain("request completed");
  expect(logs).toMatch(/"method":"PUT","url":"\/storage\/[^"]*sig=\[REDACTED\]/);
  written.push(logs, service.stdout());
  const everything = written.join("\n");
  for (const secret of secrets) {
    expect(secret.length).toBeGreaterThan(15);
    const at = everything.indexOf(secret);
    const context = everything.slice(Math.max(0, at - 300), at).replaceAll(secret, "<SECRET>");
    expect(at, `a secret was written, after: ${context}`).toBe(-1);
  }
  const unredacted = /[?&](?:sig|X-Amz-Signature)=(?!\[REDACTED\])/i.exec(everything);
  expect(unredacted && everything.slice(unredacted.index - 300, unredacted.index + 10)).toBe(null);
  expect(everything).not.toMatch(/svc-signature["']?\s*[:=]\s*["']?t=/i);
}, 300_000);

async function waitForDelivery(renderId: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const delivery = receiver.deliveries.find((d) => d.body.includes(renderId));
    if (delivery) return delivery;
    if (Date.now() > deadline) throw new Error("no webhook delivery");
    await new Promise((r) => setTimeout(r, 200));
  }
}
