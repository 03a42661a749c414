// `svc cloud`, `svc publish` and `svc auth` against the real render service (a child process with
// one render worker), with real renders checked by ffprobe: renders, publish and login as spawned
// end-to-end runs of the binary; list, get, delete, status and logout through their
// run<Verb>(options, io) with a recording IO.
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeMedia } from "../../engine/testing/probe";
import { DEFAULT_RENDER_SETTINGS } from "../../shared/render-options";
import { startService, type ServiceProcess } from "../../server/testing/service-process";
import { runLogout } from "../auth/logout";
import { runStatus } from "../auth/status";
import type { CliIo } from "../io";
import { runCloudDelete } from "./delete";
import { runCloudGet } from "./get";
import { runCloudList } from "./list";
import { runCloudRender } from "./render";
import {
  runCli,
  runInProcess,
  runInTerminal,
  runVerb,
  serviceCounts,
  tempDir,
  tinyComposition,
  writeProject,
} from "../testing/cloud-service";

const REPO = resolve(import.meta.dirname, "../../..");
const FAST = ["--fps", "5", "--quality", "draft", "--poll-interval", "1"];
/** FAST's settings, for run<Verb> called directly. */
const FAST_SETTINGS = {
  ...DEFAULT_RENDER_SETTINGS,
  composition: "index.html",
  fps: 5,
  quality: "draft" as const,
};

let service: ServiceProcess;
let work: string;
let env: Record<string, string>;

beforeAll(async () => {
  work = await tempDir();
  // --url projects on this machine are private targets: allowed for the test's file server.
  service = await startService({
    dataDir: join(work, "data"),
    jobs: 1,
    env: { SVC_SERVER_ALLOW_PRIVATE_TARGETS: "1" },
  });
  env = { HOME: join(work, "home"), SVC_API_URL: service.url, SVC_API_KEY: service.apiKey };
});

afterAll(async () => {
  await service?.kill();
});

async function sha256(file: string): Promise<string> {
  return createHash("sha256")
    .update(await readFile(file))
    .digest("hex");
}

async function expectVideo(file: string, size: { width: number; height: number }) {
  const info = await probeMedia(file);
  expect(info.format).toContain("mp4");
  expect(info.streams.find((s) => s.type === "video")).toMatchObject({ codec: "h264", ...size });
  return info;
}

function inProcess(args: string[], extra: Record<string, string | undefined> = {}) {
  return runInProcess(args, {
    SVC_CONFIG_DIR: undefined,
    SVC_ALIAS_API_KEY: undefined,
    ...env,
    ...extra,
  });
}

/** One command's run<Verb> in this process against the test's service (src/cli/testing). */
function verb<T>(run: (io: CliIo) => Promise<T>, json = false) {
  return runVerb({ SVC_CONFIG_DIR: undefined, SVC_ALIAS_API_KEY: undefined, ...env }, run, {
    json,
  });
}

describe("svc cloud render against the real service", () => {
  it("renders examples/hello-world to a valid mp4 at renders/<render_id>.mp4", async () => {
    const cwd = await mkdir(join(work, "hello"), { recursive: true }).then(() =>
      join(work, "hello"),
    );
    const result = await runCli(["cloud", "render", join(REPO, "examples/hello-world"), ...FAST], {
      cwd,
      env,
    });
    expect(result.stderr).toContain("Uploading…");
    expect(result.code, result.stderr).toBe(0);
    const renderId = /Rendered (rndr_\w+) -> /.exec(result.stdout)?.[1];
    expect(renderId).toBeDefined();
    const file = join(cwd, "renders", `${renderId}.mp4`);
    expect(result.stdout).toContain(file);
    const info = await expectVideo(file, { width: 1920, height: 1080 });
    expect(info.durationSeconds).toBeGreaterThan(4.5);
    expect(await readdir(join(cwd, "renders"))).toEqual([`${renderId}.mp4`]);
  });

  it("prints what the service found about the page (a missing image) as a warning", async () => {
    const project = await writeProject(join(work, "missing-image"), {
      "index.html": tinyComposition("lost").replace(
        "</div></body>",
        '<img src="missing.png" alt=""></div></body>',
      ),
    });
    const result = await verb((io) =>
      runCloudRender(
        {
          project: { type: "dir", dir: project },
          settings: FAST_SETTINGS,
          output: join(work, "out", "missing-image.mp4"),
          wait: true,
          pollInterval: 1,
          maxWait: 10,
        },
        io,
      ),
    );
    expect(result.code, result.stderr).toBe(0);
    const warnings = result.stderr.split("\n").filter((line) => line.startsWith("warning: "));
    expect(warnings.filter((line) => line.includes("missing.png"))).toHaveLength(1);
  });

  it("template workflow: one publish, two renders by --asset-id with different variables, one asset", async () => {
    const cwd = join(work, "template");
    await mkdir(cwd, { recursive: true });
    const before = await serviceCounts(service.dataDir);
    const published = await runCli(["publish", join(REPO, "examples/lower-third"), "--json"], {
      cwd,
      env,
    });
    expect(published.code, published.stderr).toBe(0);
    const assetId: string = JSON.parse(published.stdout).asset_id;
    expect(assetId).toMatch(/^asst_/);
    const outputs: string[] = [];
    for (const [name, title] of [
      ["grace.mp4", "Grace Hopper"],
      ["alan.mp4", "Alan Turing"],
    ] as const) {
      const result = await runCli(
        [
          "cloud",
          "render",
          "--asset-id",
          assetId,
          "--variables",
          JSON.stringify({ title }),
          "-o",
          name,
          "--json",
          ...FAST,
        ],
        { cwd, env },
      );
      expect(result.code, result.stderr).toBe(0);
      const body = JSON.parse(result.stdout);
      expect(body).toMatchObject({
        asset_id: assetId,
        status: "completed",
        output: join(cwd, name),
      });
      outputs.push(body.output);
      await expectVideo(body.output, { width: 1920, height: 1080 });
    }
    expect(await sha256(outputs[0]!)).not.toBe(await sha256(outputs[1]!));
    const after = await serviceCounts(service.dataDir);
    expect(after.assets - before.assets).toBe(1);
    expect(after.renders - before.renders).toBe(2);
  });

  it("detects 9:16 from data-width/data-height and writes to --output", async () => {
    const project = await writeProject(join(work, "vertical"), {
      "index.html": tinyComposition("vertical", { width: 1080, height: 1920 }),
    });
    const result = await verb(
      (io) =>
        runCloudRender(
          {
            project: { type: "dir", dir: project },
            settings: FAST_SETTINGS,
            output: join(work, "out", "vertical.mp4"),
            wait: true,
            pollInterval: 1,
            maxWait: 10,
            json: true,
          },
          io,
        ),
      true,
    );
    expect(result.code, result.stderr).toBe(0);
    const body = JSON.parse(result.stdout);
    expect(body.render.aspect_ratio).toBe("9:16");
    expect(body.output).toBe(join(work, "out", "vertical.mp4"));
    expect(result.result).toMatchObject({ render_id: body.render_id, output: body.output });
    await expectVideo(body.output, { width: 1080, height: 1920 });
  });

  it("--no-wait prints the render id; `svc cloud download ID` waits and downloads it", async () => {
    const project = await writeProject(join(work, "nowait"), {
      "index.html": tinyComposition("no wait"),
    });
    const cwd = join(work, "nowait-cwd");
    await mkdir(cwd, { recursive: true });
    const submitted = await runCli(["cloud", "render", project, "--no-wait", ...FAST], {
      cwd,
      env,
    });
    expect(submitted.code, submitted.stderr).toBe(0);
    const renderId = submitted.stdout.trim();
    expect(renderId).toMatch(/^rndr_\w+$/);
    const downloaded = await runCli(["cloud", "download", renderId, "--poll-interval", "1"], {
      cwd,
      env,
    });
    expect(downloaded.code, downloaded.stderr).toBe(0);
    await expectVideo(join(cwd, "renders", `${renderId}.mp4`), { width: 1920, height: 1080 });
  });

  it("renders a single HTML file by --url without zipping or uploading", async () => {
    const html = tinyComposition("from a url");
    const files = createServer((_req, res) =>
      res.writeHead(200, { "content-type": "text/html" }).end(html),
    );
    await new Promise<void>((r) => files.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(files.address() as AddressInfo).port}/index.html`;
      const before = await serviceCounts(service.dataDir);
      const result = await verb(
        (io) =>
          runCloudRender(
            {
              project: { type: "url", url },
              settings: FAST_SETTINGS,
              output: join(work, "url.mp4"),
              wait: true,
              pollInterval: 1,
              maxWait: 10,
              json: true,
            },
            io,
          ),
        true,
      );
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ status: "completed", asset_id: null });
      expect(result.stderr).not.toContain("Uploading");
      await expectVideo(join(work, "url.mp4"), { width: 1920, height: 1080 });
      expect((await serviceCounts(service.dataDir)).renders - before.renders).toBe(1);
    } finally {
      await new Promise((r) => files.close(r));
    }
  });

  it("fails with the service's code when --strict-variables breaks an asset's schema", async () => {
    const project = await writeProject(join(work, "strict"), {
      "index.html": tinyComposition("strict", {
        variables: [{ id: "title", type: "string", label: "Title", default: "x" }],
      }),
    });
    const published = await inProcess(["publish", project, "--json"]);
    expect(published.code, published.stderr).toBe(0);
    const assetId = JSON.parse(published.stdout).asset_id;
    const result = await inProcess([
      "cloud",
      "render",
      "--asset-id",
      assetId,
      "--variables",
      '{"title": 5}',
      "--strict-variables",
      ...FAST,
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /\nerror: .*title: expected a string.*\(svc_project_invalid, HTTP 422\)\nhint: .+\n$/,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("svc cloud get / list / delete", () => {
  it("lists, shows and deletes renders; a deleted render is gone", async () => {
    const list = await verb((io) => runCloudList({ limit: 1, json: true }, io), true);
    expect(list.code, list.stderr).toBe(0);
    const page = JSON.parse(list.stdout);
    expect(page.data).toHaveLength(1);
    expect(page.has_more).toBe(true);
    expect(list.result).toEqual(page);
    const all = (await verb((io) => runCloudList({ limit: 2, all: true, json: true }, io), true))
      .result!;
    expect(all.data.length).toBeGreaterThanOrEqual(4);
    expect(all.has_more).toBe(false);
    const renderId: string = page.data[0].render_id;

    const got = await verb((io) => runCloudGet({ renderId, json: true }, io), true);
    expect(JSON.parse(got.stdout)).toMatchObject({ render_id: renderId, status: "completed" });
    const human = await verb((io) => runCloudGet({ renderId }, io));
    expect(human.stdout).toContain(`${renderId}  completed`);

    const refused = await verb((io) => runCloudDelete({ renderId }, io));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("Pass --yes");
    const deleted = await verb((io) => runCloudDelete({ renderId, yes: true }, io));
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.result).toEqual({ render_id: renderId, deleted: true });
    const gone = await verb((io) => runCloudGet({ renderId }, io));
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("svc_render_not_found");
    expect(gone.stderr).toContain("hint: Check the render id with `svc cloud list`.");
  });

  it("gives one clear line and the fix for a bad credential, without the key or a stack trace", async () => {
    const badKey = "svc_key_thisKeyIsWrong0123456789";
    const result = await runCli(["cloud", "list"], {
      cwd: work,
      env: { ...env, SVC_API_KEY: badKey },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "error: the API key is invalid or revoked (authentication_failed, HTTP 401)\n" +
        "hint: Sign in again with `svc auth login --api-key` (or set SVC_API_KEY to a valid key).\n",
    );
    expect(result.stdout).toBe("");
  });
});

describe("svc auth with an API key", () => {
  it("logs in from piped stdin, shows status, keeps unknown keys, and logs out", async () => {
    const home = join(work, "auth-home");
    const configDir = join(home, ".svc");
    await mkdir(configDir, { recursive: true });
    await writeFile(
      join(configDir, "credentials"),
      JSON.stringify({ other_client: { theme: "dark" } }),
    );
    const authEnv = { HOME: home, SVC_API_URL: service.url };

    const rejected = await runCli(["auth", "login", "--api-key"], {
      cwd: work,
      env: authEnv,
      stdin: "svc_key_notAValidKey00000000\n",
    });
    expect(rejected.code).toBe(1);
    expect(rejected.stderr).toContain("rejected this API key; nothing was stored");
    expect(rejected.stderr).not.toContain("notAValidKey");

    const login = await runCli(["auth", "login", "--api-key"], {
      cwd: work,
      env: authEnv,
      stdin: `${service.apiKey}\n`,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain("Signed in as local@localhost");
    expect(login.stdout + login.stderr).not.toContain(service.apiKey);
    const file = join(configDir, "credentials");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(configDir)).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(await readFile(file, "utf8"));
    expect(stored).toMatchObject({ api_key: service.apiKey, other_client: { theme: "dark" } });

    const fromFile = {
      ...authEnv,
      SVC_API_KEY: undefined,
      SVC_ALIAS_API_KEY: undefined,
      SVC_CONFIG_DIR: undefined,
    };
    const status = await runVerb(fromFile, (io) => runStatus({ json: true }, io), { json: true });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      source: "credentials-file",
      file,
      user: { email: "local@localhost" },
      billing: { credits_remaining: expect.any(Number), credits_used: expect.any(Number) },
    });
    expect(status.stdout).not.toContain(service.apiKey);

    const logout = await runVerb({ ...authEnv, SVC_CONFIG_DIR: undefined }, (io) =>
      runLogout({}, io),
    );
    expect(logout.code).toBe(0);
    expect(logout.result).toMatchObject({ removed: true });
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ other_client: { theme: "dark" } });
    const after = await runVerb(fromFile, (io) => runStatus({}, io));
    expect(after.code).toBe(1);
    expect(after.stderr).toContain("svc auth login --api-key");
  });

  it("on a terminal asks for the key without echoing it", async () => {
    const home = join(work, "tty-home");
    await mkdir(home, { recursive: true });
    const result = await runInTerminal(["auth", "login", "--api-key"], {
      cwd: work,
      env: { HOME: home, SVC_API_URL: service.url },
      prompt: "API key: ",
      reply: `${service.apiKey}\r`,
    });
    expect(result.code, result.screen).toBe(0);
    expect(result.screen).toContain("Signed in as local@localhost");
    expect(result.screen).not.toContain(service.apiKey);
    const stored = JSON.parse(await readFile(join(home, ".svc", "credentials"), "utf8"));
    expect(stored.api_key).toBe(service.apiKey);
  });
});

describe("svc cloud delete on a terminal", () => {
  it("asks first; anything but yes keeps the render and exits 2", async () => {
    const list = await verb((io) => runCloudList({ limit: 1, json: true }, io), true);
    const renderId = list.result!.data[0]!.render_id;
    const declined = await runInTerminal(["cloud", "delete", renderId], {
      cwd: work,
      env,
      prompt: "[y/N]",
      reply: "n\r",
    });
    expect(declined.code, declined.screen).toBe(2);
    expect(declined.screen).toContain("Not deleted.");
    expect((await verb((io) => runCloudGet({ renderId }, io))).code).toBe(0);
    const accepted = await runInTerminal(["cloud", "delete", renderId], {
      cwd: work,
      env,
      prompt: "[y/N]",
      reply: "y\r",
    });
    expect(accepted.code, accepted.screen).toBe(0);
    expect((await verb((io) => runCloudGet({ renderId }, io))).code).toBe(1);
  });
});
