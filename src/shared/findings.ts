// Findings: what a composition does that svc may not render faithfully (issue 28, point 4). The
// page runtime records them (src/engine/runtime/diagnostics.ts), the engine adds the ones only it
// can see (refused network requests, a page that never became ready), a render lists their
// messages among its warnings, `svc check` prints them, and the desktop app shows them under the
// preview. One shape for all of them, so the CLI's `--json`, the IPC contract and the render agree.
// The list, with why each one matters, is in docs/composition-format.md ("What svc warns about").

export const FINDING_CODES = [
  "no-root-timeline",
  "nondeterministic-random",
  "nondeterministic-clock",
  "infinite-repeat",
  "load-failed",
  "network-refused",
  "zero-size",
  "page-error",
  "bad-start-reference",
] as const;

export type FindingCode = (typeof FINDING_CODES)[number];

/** "error": the picture is missing something (svc check exits 1); "warning": it may be wrong. */
export type FindingSeverity = "error" | "warning";

export interface Finding {
  code: FindingCode;
  severity: FindingSeverity;
  /** Plain words: what happens to the picture, and what to do about it. */
  message: string;
  /** What it is about, for machines and for telling findings apart: a URL, an element, a place in a script. */
  detail?: string;
}

/** One finding per code and detail (the first message wins), errors first, otherwise in order. */
export function mergeFindings(...lists: Finding[][]): Finding[] {
  const seen = new Map<string, Finding>();
  for (const list of lists) {
    for (const finding of list) {
      const key = `${finding.code}\u0000${finding.detail ?? finding.message}`;
      if (!seen.has(key)) seen.set(key, finding);
    }
  }
  const all = [...seen.values()];
  return [
    ...all.filter((finding) => finding.severity === "error"),
    ...all.filter((finding) => finding.severity !== "error"),
  ];
}

export function hasErrors(findings: Finding[]): boolean {
  return findings.some((finding) => finding.severity === "error");
}
