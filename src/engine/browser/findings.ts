// The engine's side of findings (src/shared/findings.ts): what the page runtime recorded
// (`window.__svc.findings()`, src/engine/runtime/diagnostics.ts), plus what only the engine sees:
// requests its network policy refused, and a page that never became ready. Used by a render (its
// warnings) and by checkComposition (svc check).
import { mergeFindings, type Finding } from "../../shared/findings";
import type { CapturePage } from "./capture";
import type { EngineError } from "../errors";

/** The findings of every page, merged; a page that is gone adds nothing. */
export async function pageFindings(sessions: CapturePage[]): Promise<Finding[]> {
  const lists = await Promise.all(
    sessions.map((session) =>
      session
        .evaluate<Finding[] | null>(
          "window.__svc && window.__svc.findings ? window.__svc.findings() : null",
        )
        .catch(() => null),
    ),
  );
  return mergeFindings(...lists.map((list) => list ?? []));
}

/**
 * A refused attempt in plain words: what the page tried (a request, a WebSocket, a WebRTC
 * connection, a DNS hint) and to where. `url` is the request's URL, or for what no request shows,
 * the scheme network.ts gives it (ws:, stun:, turn:, webrtc:, dns-prefetch:). `reason`: why svc
 * could not answer a CDN library itself (not on npm, registry unreachable).
 */
export function networkRefused(url: string, reason?: string): Finding {
  if (reason) {
    return {
      code: "network-refused",
      severity: "error",
      message: `The page asked for ${url}, and svc could not answer it itself: ${reason}. Network access is off, so whatever it brings is missing from the picture. Load a version published on npm, or copy the file into the project and use a relative path.`,
      detail: url,
    };
  }
  const tried = /^wss?:/i.test(url)
    ? `The page tried to open a WebSocket to ${url}`
    : /^(stuns?|turns?):/i.test(url)
      ? `The page tried a WebRTC connection through ${url}`
      : url.startsWith("webrtc:")
        ? `The page tried a WebRTC connection to ${url.slice("webrtc:".length)}`
        : url.startsWith("dns-prefetch:")
          ? `The page asked to look up or connect to ${url.slice("dns-prefetch:".length)} ahead of time (DNS prefetch or preconnect)`
          : `The page asked for ${url}, which is outside the project`;
  return {
    code: "network-refused",
    severity: "error",
    message: `${tried}, and network access is off, so it reached nothing and whatever it brings is missing from the picture. Copy the file into the project and use a relative path, or allow network access.`,
    detail: url,
  };
}

/**
 * Page findings plus refused requests, as one list. A refused file also fails to load in the page;
 * the refusal says why, so the load failure of that URL is left out.
 */
export function withRefusedRequests(
  findings: Finding[],
  refused: Iterable<string>,
  reasons: ReadonlyMap<string, string> = new Map(),
): Finding[] {
  const urls = new Set(refused);
  const kept = findings.filter(
    (finding) => !(finding.code === "load-failed" && finding.detail && urls.has(finding.detail)),
  );
  return mergeFindings(
    [...urls].map((url) => networkRefused(url, reasons.get(url))),
    kept,
  );
}

/** A page that failed before it was ready: the one finding that explains everything else. */
export function pageFailure(error: EngineError): Finding {
  return {
    code: "page-error",
    severity: "error",
    message: error.hint ? `${error.message} ${error.hint}` : error.message,
    detail: error.code,
  };
}
