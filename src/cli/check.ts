// `svc check [dir]`: what in a composition svc may not render faithfully, without rendering it
// (checkComposition in src/engine/inspect/check.ts). Prints each finding in plain words; `--json` prints
// the array of findings. Exits 1 when a finding is an error (a file that does not load, a refused
// request, a page that fails), 0 when there are only warnings or none.
import { join } from "node:path";
import type { Command } from "commander";
import { checkComposition } from "../engine/index";
import { hasErrors, type Finding } from "../shared/findings";
import { printJson, runAction } from "./command";
import { addCompositionFlag, addVariablesFlags, readVariablesOption } from "./options";
import type { CliIo } from "./io";

export interface CheckOptions {
  dir: string;
  composition: string;
  variables?: Record<string, unknown>;
  network: boolean;
  json?: boolean;
  signal?: AbortSignal;
}

/** Checks the composition, prints the findings and sets exit code 1 when one is an error. */
export async function runCheck(options: CheckOptions, io: CliIo): Promise<Finding[]> {
  const findings = await checkComposition(options.dir, {
    composition: options.composition,
    allowNetwork: options.network,
    ...(options.variables ? { variables: options.variables } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (options.json) printJson(io, findings);
  else io.stdout.write(formatFindings(findings, join(options.dir, options.composition)));
  io.exitCode = hasErrors(findings) ? 1 : 0;
  return findings;
}

type CheckFlags = Omit<CheckOptions, "dir" | "variables" | "signal"> & {
  variables?: string;
  variablesFile?: string;
};

export function registerCheckCommand(program: Command, io: CliIo): void {
  const command = program
    .command("check")
    .description("report what svc may not render faithfully in a composition, without rendering")
    .argument("[dir]", "project folder", ".");
  addCompositionFlag(command);
  addVariablesFlags(command, false)
    .option(
      "--no-network",
      "refuse requests outside the project, as the render service does by default",
    )
    .option("--json", "print the findings as a JSON array on stdout")
    .action((dir: string, flags: CheckFlags) =>
      runAction(io, flags.json, (signal) =>
        runCheck({ ...flags, dir, variables: readVariablesOption(flags), signal }, io),
      ),
    );
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
