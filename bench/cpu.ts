// Whole-machine CPU from /proc/stat (all cores, all processes): what a benchmark reports next to
// its times, so a run on a machine busy with other work can be recognised as such.
import { readFileSync } from "node:fs";

/** Busy and total jiffies of the whole machine since boot. */
export function cpuTimes(): { busy: number; total: number } {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1);
  const numbers = fields.map(Number);
  const idle = numbers[3]! + (numbers[4] ?? 0);
  const total = numbers.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** Busy fraction of the whole machine between two cpuTimes() readings. */
export function busyBetween(
  before: ReturnType<typeof cpuTimes>,
  after: ReturnType<typeof cpuTimes>,
): number {
  return (after.busy - before.busy) / Math.max(1, after.total - before.total);
}
