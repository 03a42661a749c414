// The engine's second door, for processes that must not load the browser code (the render
// service's API, the CLI at start-up): its types, its errors and the chunk plan. Everything else
// is reached through index.ts; the lint refuses imports past these doors (eslint.config.js).
export {
  type RenderCaptions,
  type RenderProgress,
  type RenderResult,
  type RenderCompositionOptions,
} from "./types";
export { EngineError, isEngineError } from "./errors";
export { planChunks, type Chunk } from "./stages/plan";
