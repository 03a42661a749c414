// What a project archive would hold before it is uploaded (SPEC.md section 6): the dry run's
// `{archive: ...}` in the CLI's JSON and the desktop app's dry-run report are this one shape.

export interface ArchiveReport {
  project: string;
  file_count: number;
  size_bytes: number;
  upload_limit_bytes: number;
  exceeds_upload_limit: boolean;
  largest_files: Array<{ path: string; size_bytes: number }>;
}

/** "812 B", "2.9 KiB", "210 MiB": one decimal below 100 of a unit. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value >= 100 ? 0 : 1)} ${units[unit]}`;
}
