// `svc server`'s flags through the real command: the queue-job count is --jobs, and the old
// --workers (renamed in issue 39) stops the start with the new name instead of being ignored.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");

async function svc(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, "bin", "svc.js"), ...args]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-server-flags-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("svc server flags", () => {
  it("lists --jobs in its help and not the old --workers", async () => {
    const help = await svc(["server", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--jobs <n>\s+queue jobs this process runs at a time/);
    expect(help.stdout).not.toContain("--workers");
  });

  it("refuses the old --workers, naming --jobs, before it opens anything", async () => {
    const dataDir = join(dir, "data");
    const old = await svc(["server", "--port", "0", "--data-dir", dataDir, "--workers", "2"]);
    expect(old.code).toBe(1);
    expect(old.stderr).toContain("svc server: --workers is now --jobs");
    expect(old.stderr).toContain("use --jobs 2");
    expect(old.stderr).not.toMatch(/\n\s+at /);
    expect(old.stdout).not.toContain("listening");
    expect(existsSync(dataDir)).toBe(false);
  });
});
