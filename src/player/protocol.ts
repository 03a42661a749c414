// Messages between <svc-player> and the composition frame it hosts (window.postMessage).
// The frame runs the engine's page runtime plus a small bridge (frame-bridge.ts); the player only
// ever asks it to seek, so preview frames come from the same seek code as rendered frames.
import type { CompositionInfo } from "../engine/runtime/types";
import type { PageCaptions } from "../shared/captions";

export const FRAME_TAG = "svc-frame";
export const PLAYER_TAG = "svc-player";

/** What the frame tells the player: the page contract's composition info (engine/runtime/types). */
export type FrameInfo = Omit<CompositionInfo, "variablesJson">;

export type FrameMessage =
  /** The frame script runs (sent first): a served frame whose document loaded without it failed. */
  | { tag: typeof FRAME_TAG; type: "started" }
  | { tag: typeof FRAME_TAG; type: "ready"; info: FrameInfo }
  | { tag: typeof FRAME_TAG; type: "error"; message: string }
  | { tag: typeof FRAME_TAG; type: "seeked"; id: number; time: number };

export type PlayerMessage =
  | { tag: typeof PLAYER_TAG; type: "seek"; id: number; time: number }
  /** Captions to draw from the next seek on (engine/runtime/captions.ts); null for none. */
  | { tag: typeof PLAYER_TAG; type: "captions"; captions: PageCaptions | null };

export function isFrameMessage(data: unknown): data is FrameMessage {
  return typeof data === "object" && data !== null && (data as { tag?: unknown }).tag === FRAME_TAG;
}

export function isPlayerMessage(data: unknown): data is PlayerMessage {
  return (
    typeof data === "object" && data !== null && (data as { tag?: unknown }).tag === PLAYER_TAG
  );
}
