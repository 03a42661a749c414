// checkComposition: what `svc check` and the desktop app report. The page is loaded exactly as a
// render loads it (same project server, runtime, network policy and readiness), then seeked through
// its length at a few frames per second without capturing or encoding, and the findings of the page
// runtime (runtime/diagnostics.ts) and of the engine (findings.ts) are returned. A page that never
// becomes ready is a finding too (page-error), not a thrown error: saying why is the point.
import { readFile } from "node:fs/promises";
import { scanCompositionHtml } from "../shared/composition-scan";
import { mergeFindings, type Finding } from "../shared/findings";
import { resolveChromium } from "./browser";
import { CaptureSession } from "./capture";
import { EngineError } from "./errors";
import { pageFailure, pageFindings, withRefusedRequests } from "./findings";
import { startProjectServer, type ProjectServer } from "./project-server";
import { resolveComposition } from "./render-prepare";
import { waitUntilReady } from "./render-sessions";
import { runtimeScript } from "./runtime-bundle";

export interface CheckCompositionOptions {
  /** Entry file, relative to the project folder (default index.html). */
  composition?: string;
  variables?: Record<string, unknown>;
  /** As in a render (default true); the render service renders with it off. */
  allowNetwork?: boolean;
  readyTimeoutSeconds?: number;
  signal?: AbortSignal;
}

/**
 * Seeks per second of video. Diagnostics look at layout once per quarter second of video time, so
 * this looks at every quarter second; clips shorter than that can be missed.
 */
const SAMPLES_PER_SECOND = 4;
/** Longer compositions are sampled more sparsely: a check stays a few seconds. */
const MAX_SAMPLES = 240;

export async function checkComposition(
  projectDir: string,
  options: CheckCompositionOptions = {},
): Promise<Finding[]> {
  const { signal } = options;
  const { root, entryPath, urlPath } = await resolveComposition(
    projectDir,
    options.composition ?? "index.html",
  );
  const scanned = scanCompositionHtml(await readFile(entryPath, "utf8"));
  if (!scanned.ok) throw new EngineError("composition_not_found", scanned.message, scanned.hint);
  const { width, height } = scanned.scan;

  const browser = await resolveChromium();
  const pageErrors: string[] = [];
  const refused = new Set<string>();
  let server: ProjectServer | undefined;
  let session: CaptureSession | undefined;
  const onAbort = () => void session?.close();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    throwIfAborted(signal);
    server = await startProjectServer(root);
    session = await CaptureSession.open({
      browser,
      viewport: { width, height },
      deviceScaleFactor: 1,
      transparent: false,
      imageFormat: "jpeg",
      jpegQuality: 80,
      preferredMethod: "screenshot",
      initScript: runtimeScript({ variables: options.variables ?? {} }),
      projectOrigin: server.origin,
      allowNetwork: options.allowNetwork ?? true,
      onPageError: (message) => pageErrors.push(message),
      onBlockedRequest: (url) => refused.add(url),
    });
    throwIfAborted(signal);
    const failure = await loadAndSeek(
      session,
      server.origin + urlPath,
      (options.readyTimeoutSeconds ?? 30) * 1000,
      pageErrors,
      signal,
    );
    throwIfAborted(signal);
    const found = withRefusedRequests(await pageFindings([session]), refused);
    return failure ? mergeFindings([pageFailure(failure)], found) : found;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    await session?.close();
    await server?.close();
  }
}

/** Loads the page and seeks through it; answers why it failed, if it did. */
async function loadAndSeek(
  session: CaptureSession,
  url: string,
  timeoutMs: number,
  pageErrors: string[],
  signal: AbortSignal | undefined,
): Promise<EngineError | undefined> {
  try {
    await session.load(url, timeoutMs);
    await waitUntilReady(session, timeoutMs, pageErrors);
    const duration = await session.evaluate<number>("window.__svc.duration");
    const step = Math.max(1 / SAMPLES_PER_SECOND, duration / MAX_SAMPLES);
    for (let t = 0; t < duration; t += step) {
      throwIfAborted(signal);
      await session.seek(t);
      if (pageErrors.length > 0) return pageThrew(pageErrors);
    }
    return undefined;
  } catch (error) {
    if (signal?.aborted || !(error instanceof EngineError)) throw error;
    if (error.code === "cancelled") throw error;
    return error;
  }
}

function pageThrew(messages: string[]): EngineError {
  return new EngineError(
    "page_error",
    `The composition's script threw while frames were drawn: ${messages[0]}`,
    "Open the composition in a browser, fix the error shown in the console, and check again.",
  );
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new EngineError("cancelled", "The check was cancelled.", "Start it again.");
  }
}
