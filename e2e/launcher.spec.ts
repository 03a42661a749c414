// `npm start` on a machine without the Electron runtime or a display falls back to web mode,
// prints a URL with a token, and that URL serves the app to a real browser.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { expect, test } from "./fixtures";

const root = fileURLToPath(new URL("..", import.meta.url));

async function startLauncher(
  args: string[],
): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, SVC_NO_OPEN: "1" };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  const child = spawn(process.execPath, ["scripts/launch.mjs", ...args], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+)/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) =>
      reject(new Error(`launcher exited (${code}) before printing a URL:\n${stderr}`)),
    );
  });
  return { child, url, stderr: () => stderr };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill("SIGTERM");
  await once(child, "exit");
}

test("npm start falls back to web mode and serves the app", async ({ browser }) => {
  const launched = await startLauncher([]);
  try {
    expect(launched.stderr()).toContain("web mode");
    const page = await browser.newPage();
    await page.goto(launched.url);
    await expect(page.getByRole("heading", { name: "svc Desktop" })).toBeVisible();
    // The connection line; on a first run a second status ("Looking for the examples…") can show.
    await expect(page.getByRole("status").filter({ hasText: "Connected to" })).toHaveText(
      /Connected to svc \d+\.\d+\.\d+/,
    );
    await page.close();
  } finally {
    await stop(launched.child);
  }
});

test("web mode refuses API calls without the token or from another origin", async () => {
  const launched = await startLauncher(["--web"]);
  try {
    const origin = new URL(launched.url).origin;
    const token = new URL(launched.url).hash.replace("#token=", "");
    expect((await fetch(`${origin}/api/hello`)).status).toBe(401);
    expect(
      (await fetch(`${origin}/api/hello`, { headers: { authorization: "Bearer wrong" } })).status,
    ).toBe(401);
    const foreign = await fetch(`${origin}/api/hello`, {
      headers: { authorization: `Bearer ${token}`, origin: "http://evil.example" },
    });
    expect(foreign.status).toBe(403);
    const ok = await fetch(`${origin}/api/hello`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(ok.status).toBe(200);
  } finally {
    await stop(launched.child);
  }
});
