// Electron hardening checked by a tool made for it: @doyensec/electronegativity over src (main,
// preload, the renderer's HTML and CSP), offline (scripts/electronegativity.mjs). Every finding
// above informational is either fixed or justified in docs/electron-hardening.json; a new finding, or
// a justification whose finding is gone, fails.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";

interface Finding {
  check: string;
  severity: string;
  file: string;
  line: number;
  description: string;
}

interface Justification {
  check: string;
  file: string;
  reason: string;
}

const root = join(import.meta.dirname, "../..");

it("electronegativity finds nothing above informational that is not justified", async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["scripts/electronegativity.mjs", "src"],
    { cwd: root, maxBuffer: 16 * 1024 * 1024 },
  );
  const findings = stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Finding)
    .filter((finding) => finding.severity !== "INFORMATIONAL");
  const { justified } = JSON.parse(
    await readFile(join(root, "docs/electron-hardening.json"), "utf8"),
  ) as { justified: Justification[] };
  const isJustified = (finding: Finding) =>
    justified.some((j) => j.check === finding.check && j.file === finding.file);
  expect(findings.filter((finding) => !isJustified(finding))).toEqual([]);
  const stale = justified.filter(
    (j) => !findings.some((finding) => finding.check === j.check && finding.file === j.file),
  );
  expect(stale).toEqual([]);
  for (const j of justified) expect(j.reason.length).toBeGreaterThan(40);
}, 120_000);
