// Runs @doyensec/electronegativity (Electron security anti-patterns) over a folder and prints its
// findings as JSON lines: {check, severity, confidence, file, line, manualReview, description}.
// Offline by construction: DNS answers "not found" for every name in this process, so the tool's
// optional downloads (translations, Electron's release list) fail at once and it uses what it
// ships; the release-list check is excluded (it only compares versions, which npm does) and the
// Electron version is the installed package's. Usage: node scripts/electronegativity.mjs <dir>
import dns from "node:dns";
import { createRequire } from "node:module";
import { resolve } from "node:path";

dns.lookup = (hostname, options, callback) => {
  const done = typeof options === "function" ? options : callback;
  const error = Object.assign(new Error(`offline: ${hostname}`), { code: "ENOTFOUND" });
  process.nextTick(() => done(error));
};

const require = createRequire(import.meta.url);
const run = require("@doyensec/electronegativity/dist/runner.js");
const input = resolve(process.argv[2] ?? "src");
const result = await run({
  input,
  isRelative: true,
  excludeFromScan: ["AvailableSecurityFixesGlobalCheck"],
  electronVersionOverride: require("electron/package.json").version,
});
if (result.errors.length > 0) {
  process.stderr.write(`${JSON.stringify(result.errors)}\n`);
  process.exitCode = 1;
}
for (const issue of result.issues) {
  process.stdout.write(
    `${JSON.stringify({
      check: issue.id,
      severity: issue.severity.name,
      confidence: issue.confidence.name,
      file: issue.file,
      line: issue.location.line,
      manualReview: issue.manualReview,
      description: issue.description,
    })}\n`,
  );
}
