// A logger whose lines leave in batches: gathered for up to BATCH_MS (or BATCH_BYTES) and handed
// to the service's log destination in one write. The poll lane writes one line per poll, and at
// thousands of polls a second a write per line (a trip through libuv's thread pool each) was a
// tenth of a poll's CPU (issue 40, bench/README.md). The price: a poll's line can appear up to
// BATCH_MS after its answer. Nothing is lost on the way out: what is pending goes to the
// destination when the lane closes and, before pino's own flush, when the process exits.
import pino, { type Logger, type LoggerOptions } from "pino";

const BATCH_MS = 50;
const BATCH_BYTES = 16 * 1024;

/** Where lines end up: pino's destination (sonic-boom), which flushes itself at exit. */
export interface LogDestination {
  write(text: string): unknown;
}

export class LineBatch {
  private pending = "";
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly flushAtExit = () => this.flush();

  constructor(private readonly destination: LogDestination) {
    // Before pino's exit handler, which writes out what the destination holds.
    process.prependListener("exit", this.flushAtExit);
  }

  write(line: string): void {
    // After close (a request that was in flight when the server closed): straight through.
    if (this.closed) {
      this.destination.write(line);
      return;
    }
    this.pending += line;
    if (this.pending.length >= BATCH_BYTES) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), BATCH_MS).unref();
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending === "") return;
    const text = this.pending;
    this.pending = "";
    this.destination.write(text);
  }

  close(): void {
    this.closed = true;
    this.flush();
    process.removeListener("exit", this.flushAtExit);
  }
}

/** A pino logger with `options` whose lines go through a LineBatch to `destination`. */
export function batchedLogger(
  options: LoggerOptions,
  destination: LogDestination,
): { log: Logger; batch: LineBatch } {
  const batch = new LineBatch(destination);
  return { log: pino(options, batch), batch };
}
