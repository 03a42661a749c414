// bin/svc.js runs the CLI from a bundle in out/cli/<stamp>/ that it builds when src/ changes.
import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { VERSION } from "./version";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const BUNDLES = join(ROOT, "out", "cli");

async function svc(args: string[], env: NodeJS.ProcessEnv = {}) {
  return run(process.execPath, [join(ROOT, "bin", "svc.js"), ...args], {
    env: { ...process.env, ...env },
  });
}

const bundles = () => (existsSync(BUNDLES) ? readdirSync(BUNDLES) : []);

describe("bin/svc.js", () => {
  it("runs from a bundle, builds a new one when a file under src/ is added, and runs without one", async () => {
    expect((await svc(["--version"])).stdout.trim()).toBe(VERSION);
    const before = bundles().filter((name) => existsSync(join(BUNDLES, name, "main.js")));
    expect(before.length).toBeGreaterThan(0);

    const added = join(ROOT, "src", "cli", `.bin-test-${process.pid}`);
    await writeFile(added, "a file that changes the sources' stamp\n");
    try {
      expect((await svc(["--version"])).stdout.trim()).toBe(VERSION);
      const fresh = bundles().filter((name) => !before.includes(name) && !name.endsWith(".tmp"));
      expect(fresh).toHaveLength(1);
      expect(existsSync(join(BUNDLES, fresh[0]!, "main.js"))).toBe(true);
      await rm(join(BUNDLES, fresh[0]!), { recursive: true, force: true });
    } finally {
      await rm(added, { force: true });
    }

    // The sources through tsx give the same program, errors included.
    const { stdout } = await svc(["--version"], { SVC_NO_BUNDLE: "1" });
    expect(stdout.trim()).toBe(VERSION);
    const failure = await svc(["render", join(ROOT, "no-such-project")]).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure).toMatchObject({ code: 1 });
    expect((failure as { stderr: string }).stderr).toMatch(
      /^error: The project folder .* does not exist/,
    );
  });
});
