// The engine's public entry point (`svc/engine` in package.json `exports`): rendering a
// composition on this machine, and checking what in it svc may not render faithfully. It is the
// engine's door: code outside src/engine imports only this file, contract.ts (no browser code)
// or player-assets.ts (serving <svc-player>, `svc/player-assets`); the lint refuses the rest.
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
export { runDoctor, type DoctorReport } from "./doctor";
export { sampleRenderCost } from "./inspect/quote";
export { stillFormatFor } from "./outputs/still";
export {
  renderOutput,
  type OutputFile,
  type OutputResult,
  type RenderOutputOptions,
} from "./outputs/output";
export { type AudioInput } from "./ffmpeg/encode";
export { type ChunkResult, type JoinChunksOptions, type RenderChunkOptions } from "./chunks";
export { renderChunk, joinChunks, closeWarmPages, warmUp } from "./chunks";
export { resolveChromium } from "./browser/browser";
export { serviceRendersCheck } from "./doctor";
export { transcribeComposition, type Transcript } from "./inspect/transcribe";
export type { RenderCaptions } from "./types";
