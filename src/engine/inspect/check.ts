// checkComposition: what `svc check` and the desktop app report. The page is loaded exactly as a
// render loads it (same project server, runtime, network policy and readiness), then seeked through
// its length at a few frames per second without capturing or encoding, and the findings of the page
// runtime (runtime/diagnostics.ts) and of the engine (findings.ts) are returned. A page that never
// becomes ready is a finding too (page-error), not a thrown error: saying why is the point. The
// run is a render's (withRenderRun) with the purpose "check": nothing is drawn or encoded.
import { readFile } from "node:fs/promises";
import { detectAspectRatio, scanCompositionHtml } from "../../shared/composition-scan";
import { mergeFindings, type Finding } from "../../shared/findings";
import type { CapturePage } from "../browser/capture";
import { EngineError } from "../errors";
import { pageFailure, pageFindings, withRefusedRequests } from "../browser/findings";
import { resolveComposition, type PreparedRender } from "../stages/render-prepare";
import { withRenderRun, type RenderRun } from "../stages/render-run";
import { checkRenderOptions } from "../../shared/render-options";

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
  const prepared = await prepareCheck(projectDir, options);
  const request = {
    allowNetwork: options.allowNetwork,
    readyTimeoutSeconds: options.readyTimeoutSeconds,
    signal,
    purpose: "check" as const,
  };
  return withRenderRun(prepared, request, async (run) => {
    throwIfAborted(signal);
    const session = await run.launchPage();
    throwIfAborted(signal);
    const failure = await loadAndSeek(run, session, signal);
    throwIfAborted(signal);
    const found = withRefusedRequests(await pageFindings([session]), run.blocked);
    return failure ? mergeFindings([pageFailure(failure)], found) : found;
  });
}

/**
 * The project and entry file checked as a render checks them, and the page drawn at its authored
 * size; the render settings are the defaults (a check's run uses none of them).
 */
async function prepareCheck(
  projectDir: string,
  options: CheckCompositionOptions,
): Promise<PreparedRender> {
  const { root, entryPath, urlPath } = await resolveComposition(
    projectDir,
    options.composition ?? "index.html",
  );
  const scanned = scanCompositionHtml(await readFile(entryPath, "utf8"));
  if (!scanned.ok) throw new EngineError("composition_not_found", scanned.message, scanned.hint);
  const { width, height } = scanned.scan;
  const settings = checkRenderOptions({});
  if (!settings.ok) throw new Error("the default render settings are invalid");
  return {
    settings: settings.options,
    root,
    entryPath,
    urlPath,
    scan: scanned.scan,
    variables: options.variables ?? {},
    size: { width, height },
    aspectRatio: detectAspectRatio(width, height) ?? "16:9",
    viewport: { width, height },
    deviceScaleFactor: 1,
    transparent: false,
    imageFormat: "jpeg",
    jpegQuality: 80,
    captions: undefined,
    warnings: [],
  };
}

/** Loads the page and seeks through it; answers why it failed, if it did. */
async function loadAndSeek(
  run: RenderRun,
  session: CapturePage,
  signal: AbortSignal | undefined,
): Promise<EngineError | undefined> {
  const { pageErrors } = run;
  try {
    await run.loadPage(session);
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
