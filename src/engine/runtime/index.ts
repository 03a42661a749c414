// Entry of the page runtime bundle (built by src/engine/bundles/runtime-bundle.ts, installed with
// addInitScript before any page script). The engine puts its config in window.__svcConfig first.
import { bootRuntime, DEFAULT_EPOCH_MS } from "./boot";
import { installDiagnostics } from "./diagnostics";
import { markAspectRatio } from "./aspect";
import { installChildFrame, isChildOfRuntimePage } from "./child-frame";
import { installCaptions } from "./captions";
import { installFitTexts } from "./fit-texts";
import { installShaderTransitions } from "./shader-transitions";

if (!window.__svc && !window.__svcChildFrame && isChildOfRuntimePage()) {
  // An iframe of the composition: it follows the page's clock (child-frame.ts).
  installChildFrame(window.__svcConfig?.epochMs ?? DEFAULT_EPOCH_MS);
} else if (!window.__svc) {
  const config = window.__svcConfig ?? {};
  if (config.aspect) markAspectRatio(config.aspect);
  const page = bootRuntime({
    variables: config.variables ?? {},
    ...(config.epochMs !== undefined ? { epochMs: config.epochMs } : {}),
    ...(config.libraryBase ? { libraryBase: config.libraryBase } : {}),
    ...(config.fps !== undefined ? { fps: config.fps } : {}),
  });
  // What the page does that svc may not render faithfully: `__svc.findings()`.
  installDiagnostics(page);
  // The captions layer draws after each seek (runtime/captions.ts).
  installCaptions(page, config.captions);
  // Form-filled words that shrink to fit the frame: `__svcFitTexts()` (runtime/fit-texts.ts).
  installFitTexts();
  // HyperShader transitions blended as the reference does (runtime/shader-transitions.ts).
  installShaderTransitions();
}
