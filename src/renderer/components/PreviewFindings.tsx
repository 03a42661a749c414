// Under the preview: what svc may not render faithfully in this composition (the findings of
// `svc check`, src/shared/findings.ts), errors first, each in the words the CLI prints.
import type { Finding } from "../../shared/findings";
import { IpcCallError } from "../../shared/ipc";
import { ErrorNote } from "./ErrorNote";

export function PreviewFindings({
  findings,
  pending,
  error,
}: {
  findings: Finding[] | undefined;
  pending: boolean;
  error: unknown;
}) {
  // A check replaced by a newer one says nothing about the composition.
  if (error && !(error instanceof IpcCallError && error.code === "check_superseded")) {
    return <ErrorNote error={error} title="The composition could not be checked." />;
  }
  if (pending || !findings) {
    return (
      <p className="findings-state muted" role="status">
        Checking what the video may show differently…
      </p>
    );
  }
  if (findings.length === 0) {
    return (
      <p className="findings-state muted" role="status" data-testid="findings-none">
        Checked: nothing found that svc may render wrongly.
      </p>
    );
  }
  const errors = findings.filter((finding) => finding.severity === "error").length;
  return (
    <section className="findings" aria-labelledby="findings-title">
      <h3 id="findings-title">
        {errors > 0 ? "The video will be missing something" : "The video may not look as intended"}
      </h3>
      <ul>
        {findings.map((finding) => (
          <li
            key={`${finding.code}:${finding.detail ?? finding.message}`}
            className={`finding finding-${finding.severity}`}
            data-code={finding.code}
          >
            <span className="finding-severity">
              {finding.severity === "error" ? "Error" : "Warning"}
            </span>
            <span>{finding.message}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
