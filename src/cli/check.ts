// `svc check [dir]`: what in a composition svc may not render faithfully, without rendering it
// (checkComposition in src/engine/check.ts). Prints each finding in plain words; `--json` prints
// the array of findings. Exits 1 when a finding is an error (a file that does not load, a refused
// request, a page that fails), 0 when there are only warnings or none.
import { join } from "node:path";
import type { Command } from "commander";
import { checkComposition } from "../engine/check";
import { hasErrors, type Finding } from "../shared/findings";
import { reportError } from "./errors";
import { readVariablesOption } from "./options";
import type { CliIo } from "./io";

interface CheckFlags {
  composition: string;
  variables?: string;
  variablesFile?: string;
  network: boolean;
  json?: boolean;
}

export function registerCheckCommand(program: Command, io: CliIo): void {
  program
    .command("check")
    .description("report what svc may not render faithfully in a composition, without rendering")
    .argument("[dir]", "project folder", ".")
    .option(
      "-c, --composition <path>",
      "entry HTML file, relative to the project folder",
      "index.html",
    )
    .option("--variables <json>", "variable values as a JSON object")
    .option("--variables-file <file>", "variable values from a JSON file")
    .option(
      "--no-network",
      "refuse requests outside the project, as the render service does by default",
    )
    .option("--json", "print the findings as a JSON array on stdout")
    .action(async (dir: string, flags: CheckFlags) => {
      const controller = new AbortController();
      const onSigint = () => controller.abort();
      process.once("SIGINT", onSigint);
      try {
        const variables = readVariablesOption(flags);
        const findings = await checkComposition(dir, {
          composition: flags.composition,
          allowNetwork: flags.network,
          ...(variables ? { variables } : {}),
          signal: controller.signal,
        });
        io.stdout.write(
          flags.json
            ? `${JSON.stringify(findings, null, 2)}\n`
            : formatFindings(findings, join(dir, flags.composition)),
        );
        io.exitCode = hasErrors(findings) ? 1 : 0;
      } catch (error) {
        reportError(error, Boolean(flags.json), io);
      } finally {
        process.off("SIGINT", onSigint);
      }
    });
}

export function formatFindings(findings: Finding[], composition: string): string {
  if (findings.length === 0) {
    return `Nothing found in ${composition} that svc may not render faithfully.\n`;
  }
  const lines = findings.map(
    (finding) =>
      `${finding.severity === "error" ? "✗ error" : "! warning"} [${finding.code}] ${finding.message}`,
  );
  const errors = findings.filter((finding) => finding.severity === "error").length;
  const warnings = findings.length - errors;
  const counts = [
    errors > 0 ? `${errors} error${errors === 1 ? "" : "s"}` : "",
    warnings > 0 ? `${warnings} warning${warnings === 1 ? "" : "s"}` : "",
  ].filter(Boolean);
  return `${lines.join("\n")}\n\n${counts.join(", ")} in ${composition}.\n`;
}
