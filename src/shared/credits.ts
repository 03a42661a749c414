// The one billing rule (SPEC.md section 4): 1 credit per started second of output, x1.5 for 4k.
// The service charges with it when a render completes and the app estimates with it before a
// render is submitted, so the estimate a creator sees is the charge they get.
import { CREDITS_PER_SECOND, FOUR_K_MULTIPLIER } from "./limits";
import type { Resolution } from "./render-options";

/** Credits for a video of `durationSeconds` at `resolution` (at least one started second). */
export function creditsFor(durationSeconds: number, resolution: Resolution | string): number {
  // Tolerate float noise from the engine (2.0000001 s is 2 seconds, not 3).
  const startedSeconds = Math.max(1, Math.ceil(durationSeconds - 1e-6));
  const multiplier = resolution === "4k" ? FOUR_K_MULTIPLIER : 1;
  return startedSeconds * CREDITS_PER_SECOND * multiplier;
}

/**
 * Credits of one output of a render (its charge line): a video is charged for its duration, a still
 * for one frame (one started second: creditsFor's minimum). A render's charge is the sum of its
 * outputs' lines; the quote adds up the same lines.
 */
export function outputCredits(
  output: { kind: "video" | "still"; resolution: Resolution | string },
  durationSeconds: number,
  fps: number,
): number {
  return creditsFor(output.kind === "still" ? 1 / fps : durationSeconds, output.resolution);
}
