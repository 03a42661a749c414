// Progress on stderr: a bar redrawn in place on a terminal, and plain lines (every 10%)
// otherwise, so logs from CI stay readable.
import type { OutputStream } from "./io";

export interface ProgressLine {
  update(fraction: number, text: string): void;
  done(): void;
}

export function createProgressLine(stream: OutputStream): ProgressLine {
  const tty = Boolean(stream.isTTY);
  let lastStep = -1;
  let drawn = false;
  return {
    update(fraction, text) {
      const percent = Math.max(0, Math.min(100, Math.floor(fraction * 100)));
      if (tty) {
        const width = 24;
        const filled = Math.round((percent / 100) * width);
        stream.write(
          `\r\x1b[2K${"█".repeat(filled)}${"░".repeat(width - filled)} ${String(percent).padStart(3)}% ${text}`,
        );
        drawn = true;
        return;
      }
      const step = Math.floor(percent / 10);
      if (step === lastStep) return;
      lastStep = step;
      stream.write(`${percent}% ${text}\n`);
    },
    done() {
      if (tty && drawn) stream.write("\r\x1b[2K");
      drawn = false;
    },
  };
}
