// The main process's `project.check`: the real `svc check` in a child process, its JSON turned into
// findings or into the CLI's error, and a newer check of the same composition stopping the older.
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCheckOutput, ProjectChecks } from "./project-check";

/** The error a check failed with (the main process's own, before it crosses the IPC boundary). */
async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  return promise.then(
    () => {
      throw new Error("expected the check to fail");
    },
    (error: { code: string; message: string }) => error,
  );
}

const ROOT = resolve(import.meta.dirname, "../..");
const FIXTURES = join(ROOT, "src", "engine", "testing", "check-fixtures");
const SVC_BIN = join(ROOT, "bin", "svc.js");

describe("ProjectChecks", () => {
  it("answers the findings of svc check, with network access off", async () => {
    const checks = new ProjectChecks(SVC_BIN);
    const findings = await checks.check({
      root: join(FIXTURES, "network-refused"),
      composition: "index.html",
    });
    expect(findings).toEqual([
      expect.objectContaining({ code: "network-refused", severity: "error" }),
    ]);
  });

  it("stops a check when a newer one of the same composition starts", async () => {
    const checks = new ProjectChecks(SVC_BIN);
    const input = { root: join(FIXTURES, "zero-size"), composition: "index.html" };
    const older = checks.check(input);
    const newer = checks.check(input);
    expect((await failure(older)).code).toBe("check_superseded");
    expect(await newer).toEqual([expect.objectContaining({ code: "zero-size" })]);
  });

  it("turns the CLI's JSON error into the same error", async () => {
    const checks = new ProjectChecks(SVC_BIN);
    const error = await failure(checks.check({ root: FIXTURES, composition: "index.html" }));
    expect(error.code).toBe("composition_not_found");
  });
});

describe("parseCheckOutput", () => {
  it("names the error of a check that crashed, not Node's version line after it", () => {
    const stderr = [
      "node:internal/process/promises:394",
      "    triggerUncaughtException(err, true /* fromPromise */);",
      "    ^",
      "",
      "TypeError: Cannot read properties of undefined (reading 'send')",
      "    at CdpBrowser.send (cdp.ts:1:1)",
      "",
      "Node.js v22.23.3",
      "",
    ].join("\n");
    expect(() => parseCheckOutput("", 1, stderr)).toThrow(
      "The check did not finish: TypeError: Cannot read properties of undefined (reading 'send')",
    );
  });

  it("says the check did not finish when its output is not JSON", () => {
    expect(() => parseCheckOutput("", null, "Killed\n")).toThrow(
      "The check did not finish: Killed",
    );
  });
});
