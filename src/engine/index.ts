// The engine's public entry point (`svc/engine` in package.json `exports`): what an app built on
// svc needs to render compositions on its own machine and to serve <svc-player>. The repository's
// own code imports the modules directly; this list is the contract templates and users rely on.
export { renderComposition } from "./render";
export type { RenderCompositionOptions, RenderProgress, RenderResult } from "./types";
export { EngineError, isEngineError, type EngineErrorCode } from "./errors";
export { playerModule } from "./player-bundle";
export { gsapDistFile } from "./network";
export { resolveChromium } from "./browser";
export { resolveFfmpeg, resolveFfprobe } from "./ffmpeg";
