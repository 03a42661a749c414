// `svc cloud render` rules that hold before anything is uploaded: the dry run (no service, no
// credential), flag bounds, conflicting inputs and local checks. A listening socket counts
// requests, to show that refused commands never reach the network.
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  runCli,
  runInProcess,
  startRequestCounter,
  tempDir,
  tinyComposition,
  writeProject,
} from "../testing/cloud-service";

let counter: Awaited<ReturnType<typeof startRequestCounter>>;
let listenerUrl: string;
let home: string;
let project: string;

beforeAll(async () => {
  counter = await startRequestCounter();
  listenerUrl = counter.url;
  home = await tempDir();
  project = await writeProject(join(home, "project"), {
    "index.html": tinyComposition("rules", {
      variables: [{ id: "title", type: "string", label: "Title", default: "x", maxLength: 10 }],
    }),
    "media/big.bin": Buffer.alloc(3000, 7),
    "renders/old.mp4": "old output",
    ".env": "SECRET=1",
    "node_modules/x/index.js": "x",
    "notes/draft.txt": "draft",
    ".svcignore": "notes/\n",
  });
});

afterAll(async () => {
  await counter.close();
});

/** Runs svc (in-process) with a credential and SVC_API_URL pointing at the request counter. */
async function svc(args: string[], env: Record<string, string> = {}) {
  return runInProcess(args, {
    HOME: home,
    SVC_CONFIG_DIR: undefined,
    SVC_ALIAS_API_KEY: undefined,
    SVC_API_URL: listenerUrl,
    SVC_API_KEY: "svc_key_notused123",
    ...env,
  });
}

describe("svc cloud render --dry-run", () => {
  it("prints the archive report as JSON, field for field, with no service and no credential", async () => {
    const before = counter.requests();
    const result = await runCli(["cloud", "render", project, "--dry-run", "--json"], {
      cwd: home,
      // Nothing configured at all: default URL, empty config dir.
      env: { HOME: home, SVC_CONFIG_DIR: join(home, "empty-config") },
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(Object.keys(report)).toEqual(["archive"]);
    expect(Object.keys(report.archive)).toEqual([
      "project",
      "file_count",
      "size_bytes",
      "upload_limit_bytes",
      "exceeds_upload_limit",
      "largest_files",
    ]);
    expect(report.archive).toMatchObject({
      project,
      file_count: 2,
      upload_limit_bytes: 209_715_200,
      exceeds_upload_limit: false,
      largest_files: [
        { path: "media/big.bin", size_bytes: 3000 },
        { path: "index.html", size_bytes: expect.any(Number) },
      ],
    });
    expect(report.archive.size_bytes).toBeGreaterThan(100);
    expect(counter.requests()).toBe(before);
    await expect(readdir(join(home, "empty-config"))).rejects.toThrow();
  });

  it("prints a human report with the largest files", async () => {
    const result = await svc(["cloud", "render", project, "--dry-run"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("2 files");
    expect(result.stdout).toMatch(/2\.9 KiB\s+media\/big\.bin/);
  });

  it("defaults to the current folder", async () => {
    const result = await runCli(["cloud", "render", "--dry-run", "--json"], {
      cwd: project,
      env: { HOME: home },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).archive.project).toBe(project);
  });

  it("svc publish --dry-run gives the same report", async () => {
    const publish = await svc(["publish", project, "--dry-run", "--json"]);
    const render = await svc(["cloud", "render", project, "--dry-run", "--json"]);
    expect(publish.code).toBe(0);
    expect(JSON.parse(publish.stdout)).toEqual(JSON.parse(render.stdout));
  });

  it("refuses --dry-run with --asset-id", async () => {
    const result = await svc(["cloud", "render", "--asset-id", "asst_1", "--dry-run"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--dry-run inspects a local project");
  });
});

describe("svc cloud render flag rules (refused before any upload)", () => {
  const refusals: Array<[string, string[], RegExp]> = [
    ["4k with webm", ["--resolution", "4k", "--format", "webm"], /4k cannot be rendered as webm/],
    ["4k with mov", ["--resolution", "4k", "--format", "mov"], /4k cannot be rendered as mov/],
    ["fps 0", ["--fps", "0"], /--fps must be a whole number from 1 to 240/],
    ["fps 241", ["--fps", "241"], /--fps must be a whole number from 1 to 240/],
    ["fractional fps", ["--fps", "29.97"], /--fps must be a whole number/],
    ["an unknown format", ["--format", "avi"], /Allowed choices are mp4, webm, mov/],
    ["an empty idempotency key", ["--idempotency-key", ""], /--idempotency-key must be 1 to 255/],
    [
      "a 256-character idempotency key",
      ["--idempotency-key", "k".repeat(256)],
      /--idempotency-key must be 1 to 255/,
    ],
    [
      "an idempotency key with a space",
      ["--idempotency-key", "two words"],
      /--idempotency-key must be 1 to 255/,
    ],
    [
      "a folder and --asset-id",
      ["--asset-id", "asst_1"],
      /only one of a project folder, --asset-id or --url/,
    ],
    [
      "--variables with --variables-file",
      ["--variables", "{}", "--variables-file", "v.json"],
      /either --variables or --variables-file/,
    ],
    ["variables that are not JSON", ["--variables", "{nope"], /--variables is not valid JSON/],
    [
      "a plain-http callback URL",
      ["--callback-url", "http://example.com/hook"],
      /--callback-url must be an HTTPS URL/,
    ],
    ["a zero poll interval", ["--poll-interval", "0"], /--poll-interval must be a whole number/],
    [
      "a conflicting aspect ratio",
      ["--aspect-ratio", "9:16"],
      /aspect ratio 9:16 conflicts with the composition, which is 1920x1080 \(16:9\)[\s\S]*hint: Leave out --aspect-ratio/,
    ],
  ];
  for (const [name, flags, message] of refusals) {
    it(`refuses ${name} with exit 2 before uploading`, async () => {
      const before = counter.requests();
      const result = await svc(["cloud", "render", project, ...flags]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(counter.requests()).toBe(before);
    });
  }

  it("refuses --asset-id together with --url", async () => {
    const result = await svc([
      "cloud",
      "render",
      "--asset-id",
      "asst_1",
      "--url",
      "https://example.com/p.zip",
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--asset-id and --url");
  });

  it("accepts the fps and idempotency-key bounds", async () => {
    for (const flags of [
      ["--fps", "1"],
      ["--fps", "240"],
      ["--idempotency-key", "k".repeat(255)],
      ["--idempotency-key", "A-z_0:9.x"],
    ]) {
      const result = await svc(["cloud", "render", project, "--dry-run", ...flags]);
      expect(result.code, `${flags.join(" ")}: ${result.stderr}`).toBe(0);
    }
  });

  it("fails fast on variables that break the schema with --strict-variables, before any upload", async () => {
    const before = counter.requests();
    const result = await svc([
      "cloud",
      "render",
      project,
      "--variables",
      '{"title":"far too long a title","colour":"red"}',
      "--strict-variables",
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      "title: is 20 characters long, longer than maxLength 10 (out-of-range)",
    );
    expect(result.stderr).toContain("colour: is not declared by the composition (undeclared)");
    expect(counter.requests()).toBe(before);
  });

  it("refuses a value that breaks its range before any upload, even without --strict-variables", async () => {
    const before = counter.requests();
    const result = await svc([
      "cloud",
      "render",
      project,
      "--variables",
      '{"title":"far too long a title"}',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("longer than maxLength 10 (out-of-range)");
    expect(result.stderr).toContain("hint: Fix the project or the --variables values");
    expect(counter.requests()).toBe(before);
  });

  it("only warns about undeclared variables without --strict-variables", async () => {
    const result = await svc([
      "cloud",
      "render",
      project,
      "--dry-run",
      "--variables",
      '{"colour":"red"}',
    ]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("warning: variable colour: is not declared by the composition");
  });

  it("refuses a composition that is not 16:9, 9:16 or 1:1", async () => {
    const odd = await writeProject(join(home, "odd"), {
      "index.html": tinyComposition("odd", { width: 1600, height: 1200 }),
    });
    const result = await svc(["cloud", "render", odd]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("1600x1200, which is not 16:9, 9:16 or 1:1");
  });

  it("says how to sign in when there is no credential", async () => {
    await mkdir(join(home, "no-credential"), { recursive: true });
    const result = await runCli(["cloud", "render", project], {
      cwd: home,
      env: { HOME: join(home, "no-credential"), SVC_API_URL: listenerUrl },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "error: No credential: svc is not signed in to the render service.\nhint: Run `svc auth login --api-key` (or set SVC_API_KEY).\n",
    );
  });

  it("reports errors as JSON with --json", async () => {
    const result = await svc([
      "cloud",
      "render",
      project,
      "--resolution",
      "4k",
      "--format",
      "mov",
      "--json",
    ]);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toEqual({
      error: {
        code: "usage_error",
        message: expect.stringContaining("4k cannot be rendered as mov"),
        hint: "Use --format mp4 with --resolution 4k.",
      },
    });
  });

  it("reports flag errors found by the parser as JSON too", async () => {
    const result = await runCli(["cloud", "render", project, "--format", "avi", "--json"], {
      cwd: home,
      env: { HOME: home },
    });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toEqual({
      error: {
        code: "usage_error",
        message: expect.stringContaining("Allowed choices are mp4, webm, mov"),
      },
    });
  });
});
