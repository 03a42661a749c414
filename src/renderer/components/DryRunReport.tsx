// What the upload would hold, before anything is uploaded: size against the limit, file count,
// the largest files, and for a large file the `.svcignore` line that would leave it out.
import type { DryRunReport as Report } from "../../shared/ipc";
import { formatBytes } from "../../shared/archive-report";
import { suggestedIgnoreLine } from "../render-plan";

/** A file this large in an over-limit project gets a suggested ignore line. */
const LARGE_FILE_SHARE = 0.1;

export function DryRunReport({ report }: { report: Report }) {
  const over = report.exceeds_upload_limit;
  const largest = report.largest_files.slice(0, 10);
  return (
    <section className="panel" aria-labelledby="dry-run-title" data-testid="dry-run-report">
      <h2 id="dry-run-title">Dry run</h2>
      <p className={over ? "issue" : "ok"} role="status">
        {over
          ? `Too large to upload: ${formatBytes(report.size_bytes)} compressed, over the ${formatBytes(report.upload_limit_bytes)} limit.`
          : `${formatBytes(report.size_bytes)} compressed of ${formatBytes(report.upload_limit_bytes)} allowed · ${report.file_count} files`}
      </p>
      {largest.length === 0 ? (
        <p className="muted">No files.</p>
      ) : (
        <table className="files">
          <caption>Largest files</caption>
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">Size</th>
            </tr>
          </thead>
          <tbody>
            {largest.map((file) => (
              <tr key={file.path}>
                <td>
                  <code>{file.path}</code>
                  {over && file.size_bytes > report.upload_limit_bytes * LARGE_FILE_SHARE ? (
                    <div className="hint">
                      Add <code>{suggestedIgnoreLine(file.path)}</code> to .svcignore to leave it
                      out.
                    </div>
                  ) : null}
                </td>
                <td>{formatBytes(file.size_bytes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
