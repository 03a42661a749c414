// The engine's public entry point (`svc/engine` in package.json `exports`): rendering a
// composition on this machine, and checking what in it svc may not render faithfully. The repository's own code imports the modules directly; this list
// is the contract templates and users rely on. Serving <svc-player> is `svc/player-assets`.
export { renderComposition } from "./render";
export { checkComposition, type CheckCompositionOptions } from "./inspect/check";
export {
  renderStill,
  STILL_FORMATS,
  type RenderStillOptions,
  type StillFormat,
  type StillResult,
} from "./outputs/still";
export type { Finding, FindingCode, FindingSeverity } from "../shared/findings";
export type { RenderCompositionOptions, RenderProgress, RenderResult } from "./types";
export type { NetworkAccess } from "./browser/network";
export { EngineError, isEngineError, type EngineErrorCode } from "./errors";
