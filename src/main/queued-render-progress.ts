// ETA from measured rates: within one stage, the fraction done so far divided by the time it took
// gives a rate, and the rest of the stage at that rate gives the ETA. No guess before the stage has
// run for a moment and moved, because an estimate from one sample jumps around.
export class EtaMeter {
  private stage: string | undefined;
  private startedAt = 0;
  private startFraction = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Seconds left in `stage` at `fraction` (0..1) done, or undefined when there is no rate yet. */
  estimate(stage: string, fraction: number): number | undefined {
    const now = this.now();
    if (stage !== this.stage) {
      this.stage = stage;
      this.startedAt = now;
      this.startFraction = fraction;
      return undefined;
    }
    const elapsed = (now - this.startedAt) / 1000;
    const done = fraction - this.startFraction;
    if (elapsed < 0.5 || done <= 0) return undefined;
    return Math.max(0, Math.round(((1 - fraction) * elapsed) / done));
  }
}
