// Entry of the page runtime bundle (built by src/engine/runtime-bundle.ts, installed with
// addInitScript before any page script). The engine puts its config in window.__svcConfig first.
import { bootRuntime } from "./boot";

if (!window.__svc) {
  const config = window.__svcConfig ?? {};
  bootRuntime({
    variables: config.variables ?? {},
    ...(config.epochMs !== undefined ? { epochMs: config.epochMs } : {}),
  });
}
