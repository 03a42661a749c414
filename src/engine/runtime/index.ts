// Entry of the page runtime bundle (built by src/engine/runtime-bundle.ts, installed with
// addInitScript before any page script). The engine puts its config in window.__svcConfig first.
import { bootRuntime } from "./boot";
import { installDiagnostics } from "./diagnostics";
import { markAspectRatio } from "./aspect";

if (!window.__svc) {
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
}
