// `svc check` through the real binary: exit 1 on an error finding, 0 on warnings or none, the same
// findings as JSON with --json, and the CLI's usual errors for a folder that is not a project.
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const FIXTURES = join(ROOT, "src", "engine", "testing", "check-fixtures");

function svc(args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      [join(ROOT, "bin", "svc.js"), ...args],
      { timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

describe("svc check", () => {
  it("says what fails to load in plain words and exits 1", async () => {
    const dir = join(FIXTURES, "missing-image");
    const { code, stdout } = await svc(["check", dir]);
    expect(stdout).toBe(
      "✗ error [load-failed] The image /images/missing-logo.png could not be loaded, so the frame is drawn without it. Check that the file exists at that path in the project (paths are relative to the page that uses them) and opens in a browser.\n" +
        `\n1 error in ${join(dir, "index.html")}.\n`,
    );
    expect(code).toBe(1);
  });

  it("prints the findings as a JSON array with --json, and exits 0 when they are warnings", async () => {
    const { code, stdout } = await svc([
      "check",
      join(FIXTURES, "infinite-repeat-outside-timeline"),
      "--json",
    ]);
    expect(JSON.parse(stdout)).toEqual([
      {
        code: "infinite-repeat",
        severity: "warning",
        message: expect.stringContaining("repeats forever (repeat: -1)"),
        detail: "div#spinner.box",
      },
    ]);
    expect(code).toBe(0);
  });

  it("refuses requests outside the project with --no-network, an error", async () => {
    const { code, stdout } = await svc([
      "check",
      join(FIXTURES, "network-refused"),
      "--no-network",
      "--json",
    ]);
    expect(JSON.parse(stdout)).toEqual([
      expect.objectContaining({
        code: "network-refused",
        severity: "error",
        detail: "https://images.example.com/logo.png",
      }),
    ]);
    expect(code).toBe(1);
  });

  it("finds nothing in an example and says so", async () => {
    const { code, stdout } = await svc(["check", join(ROOT, "examples", "hello-world")]);
    expect(stdout).toMatch(
      /^Nothing found in .*hello-world\/index\.html that svc may not render faithfully\.\n$/,
    );
    expect(code).toBe(0);
  });

  it("reports a folder without the entry file as an error in JSON, exit 1", async () => {
    const { code, stdout } = await svc(["check", FIXTURES, "--json"]);
    expect(JSON.parse(stdout)).toEqual({
      error: expect.objectContaining({ code: "composition_not_found" }),
    });
    expect(code).toBe(1);
  });
});
