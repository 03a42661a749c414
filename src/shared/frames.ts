// How many frames a composition of a given duration has at a given fps: the one rule the engine's
// plan, chunk plans, quotes (and so credits), the service and the player all count with. It is the
// format's rule (the reference renderer's probe stage): a started frame counts, so the count is
// ceil(duration x fps), except that a product within 1e-3 of a whole number is that number (a
// 1.001 s page at 30 fps is 30 frames, not 31; 0.4 s at 30 fps is 12, where round gave 12 too,
// but 14.1 frames are 15, where round gave 14).

/** How close to a whole number of frames a duration x fps counts as exactly that number. */
const FRAME_BOUNDARY_EPSILON = 1e-3;

/** Frames of `durationSeconds` at `fps` (0 for a duration of 0 or less). */
export function frameCount(durationSeconds: number, fps: number): number {
  const exact = durationSeconds * fps;
  if (!(exact > 0)) return 0;
  const nearest = Math.round(exact);
  return Math.abs(exact - nearest) <= FRAME_BOUNDARY_EPSILON ? nearest : Math.ceil(exact);
}
