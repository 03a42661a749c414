// The dry run's archive report as people read it (`svc cloud render --dry-run`, `svc publish
// --dry-run`, and the same with --batch); --json prints the report object itself.
import { formatBytes, type ArchiveReport } from "../../shared/archive-report";
import type { CliIo } from "../io";

export function printArchiveReport(io: CliIo, report: ArchiveReport): void {
  const lines = [
    `Project ${report.project}`,
    `  ${report.file_count} files, ${formatBytes(report.size_bytes)} zipped (limit ${formatBytes(report.upload_limit_bytes)})${report.exceeds_upload_limit ? " — OVER THE UPLOAD LIMIT" : ""}`,
    "  Largest files:",
    ...report.largest_files.map(
      (file) => `  ${formatBytes(file.size_bytes).padStart(10)}  ${file.path}`,
    ),
  ];
  io.stdout.write(`${lines.join("\n")}\n`);
}
