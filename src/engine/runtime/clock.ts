// Virtual time for the page (SPEC.md section 2, "Determinism"). A render seeks to exact frame
// times, so every clock a page script can read must follow the seek, not the wall clock:
// `Date`, `performance.now`, `requestAnimationFrame` and timers. rAF callbacks and due timers run
// inside `advanceTo`, in time order, so a page that animates from rAF draws the frame for t.
// Timers with a delay of 0 still run promptly (on a real macrotask) so start-up code that defers
// work with `setTimeout(fn)` keeps working before the first seek.

type TimerHandler = (...args: unknown[]) => void;

interface VirtualTimer {
  id: number;
  dueMs: number;
  intervalMs: number | undefined;
  handler: TimerHandler;
  args: unknown[];
}

export interface VirtualClock {
  /** Virtual milliseconds since time 0. */
  nowMs(): number;
  /** requestAnimationFrame callbacks waiting for the next advance. */
  pendingFrames(): number;
  /** Move virtual time to `ms`: runs due timers in order, then one round of rAF callbacks. */
  advanceTo(ms: number): void;
  /** The browser's real timers, for the runtime's own waiting. */
  realSetTimeout: typeof setTimeout;
  realClearTimeout: typeof clearTimeout;
}

/** How page code read the clock: the three reads virtual time answers. */
export type ClockRead = "Date.now()" | "new Date()" | "performance.now()";

/**
 * Told of every read of virtual time (diagnostics.ts decides whether it matters). One listener per
 * page: the runtime is installed once.
 */
let clockReadListener: ((read: ClockRead) => void) | undefined;
export function onClockRead(listener: ((read: ClockRead) => void) | undefined): void {
  clockReadListener = listener;
}

/** Longest chain of timers one advance runs, so a runaway setInterval(fn, 0) cannot hang a seek. */
const MAX_TIMERS_PER_ADVANCE = 10_000;

export function installVirtualClock(epochMs: number): VirtualClock {
  const win = window as unknown as Record<string, unknown>;
  const RealDate = Date;
  const realSetTimeout = window.setTimeout.bind(window) as typeof setTimeout;
  const realClearTimeout = window.clearTimeout.bind(window) as typeof clearTimeout;
  let now = 0;
  exposeRealTimersToPlaywright(RealDate);

  // Date: `new Date()` and `Date.now()` read virtual time; every other form is untouched.
  // Reusing the real prototype keeps `instanceof Date` and all methods working.
  function VirtualDate(this: unknown, ...args: unknown[]): unknown {
    if (!new.target) {
      clockReadListener?.("new Date()");
      return new RealDate(epochMs + now).toString();
    }
    if (args.length === 0) {
      clockReadListener?.("new Date()");
      return Reflect.construct(RealDate, [epochMs + now], new.target);
    }
    return Reflect.construct(RealDate, args, new.target);
  }
  VirtualDate.prototype = RealDate.prototype;
  Object.defineProperties(VirtualDate, {
    now: {
      value: () => {
        clockReadListener?.("Date.now()");
        return Math.floor(epochMs + now);
      },
      writable: true,
      configurable: true,
    },
    parse: { value: RealDate.parse, writable: true, configurable: true },
    UTC: { value: RealDate.UTC, writable: true, configurable: true },
    length: { value: 7 },
    name: { value: "Date" },
  });
  RealDate.prototype.constructor = VirtualDate as unknown as DateConstructor;
  win.Date = VirtualDate;

  const perf = window.performance;
  Object.defineProperty(perf, "now", {
    value: () => {
      clockReadListener?.("performance.now()");
      return now;
    },
    writable: true,
    configurable: true,
  });

  // requestAnimationFrame: callbacks wait for the next advance and get the virtual timestamp.
  let frameCallbacks = new Map<number, FrameRequestCallback>();
  let nextFrameId = 1;
  win.requestAnimationFrame = (callback: FrameRequestCallback): number => {
    const id = nextFrameId++;
    frameCallbacks.set(id, callback);
    return id;
  };
  win.cancelAnimationFrame = (id: number): void => {
    frameCallbacks.delete(id);
  };

  // Timers: ordered by due time, then by creation.
  const timers = new Map<number, VirtualTimer>();
  let nextTimerId = 1;
  let flushScheduled = false;
  const scheduleFlush = () => {
    if (flushScheduled) return;
    flushScheduled = true;
    realSetTimeout(() => {
      flushScheduled = false;
      runDueTimers(now);
    }, 0);
  };
  const addTimer = (handler: unknown, delay: unknown, args: unknown[], repeat: boolean): number => {
    const id = nextTimerId++;
    const ms = Math.max(0, Number(delay) || 0);
    const fn: TimerHandler =
      typeof handler === "function"
        ? (handler as TimerHandler)
        : () => {
            (0, eval)(String(handler));
          };
    timers.set(id, {
      id,
      dueMs: now + ms,
      intervalMs: repeat ? Math.max(ms, 1) : undefined,
      handler: fn,
      args,
    });
    if (ms === 0) scheduleFlush();
    return id;
  };
  const clearTimer = (id: unknown): void => {
    timers.delete(Number(id));
  };
  win.setTimeout = (handler: unknown, delay?: unknown, ...args: unknown[]) =>
    addTimer(handler, delay, args, false);
  win.setInterval = (handler: unknown, delay?: unknown, ...args: unknown[]) =>
    addTimer(handler, delay, args, true);
  win.clearTimeout = clearTimer;
  win.clearInterval = clearTimer;

  function nextDue(limitMs: number): VirtualTimer | undefined {
    let best: VirtualTimer | undefined;
    for (const timer of timers.values()) {
      if (timer.dueMs > limitMs) continue;
      if (!best || timer.dueMs < best.dueMs || (timer.dueMs === best.dueMs && timer.id < best.id)) {
        best = timer;
      }
    }
    return best;
  }

  function runDueTimers(limitMs: number): void {
    for (let count = 0; count < MAX_TIMERS_PER_ADVANCE; count++) {
      const timer = nextDue(limitMs);
      if (!timer) return;
      // Time never runs backwards inside one advance; a timer due "in the past" after a backwards
      // seek runs at the current time.
      if (timer.dueMs > now) now = timer.dueMs;
      if (timer.intervalMs === undefined) timers.delete(timer.id);
      else timer.dueMs += timer.intervalMs;
      try {
        timer.handler(...timer.args);
      } catch (error) {
        reportError(error);
      }
    }
  }

  return {
    nowMs: () => now,
    pendingFrames: () => frameCallbacks.size,
    advanceTo(ms: number): void {
      if (timers.size > 0) runDueTimers(ms);
      now = ms;
      if (frameCallbacks.size > 0) {
        const callbacks = frameCallbacks;
        frameCallbacks = new Map();
        for (const callback of callbacks.values()) {
          try {
            callback(ms);
          } catch (error) {
            reportError(error);
          }
        }
      }
    },
    realSetTimeout,
    realClearTimeout,
  };
}

/**
 * Playwright evaluates `waitForFunction` polling (rAF or interval) with the page's own timers,
 * which are virtual here and would never fire between seeks. Its utility script takes its timers
 * from `__pwClock.builtins` when that exists (the hook of Playwright's clock emulation), so we hand
 * it the real ones. Captured before any override.
 */
function exposeRealTimersToPlaywright(RealDate: DateConstructor): void {
  const win = window as unknown as Record<string, unknown>;
  if (win.__pwClock) return;
  const realNow = performance.now.bind(performance);
  const builtins = {
    setTimeout: window.setTimeout.bind(window),
    clearTimeout: window.clearTimeout.bind(window),
    setInterval: window.setInterval.bind(window),
    clearInterval: window.clearInterval.bind(window),
    requestAnimationFrame: window.requestAnimationFrame.bind(window),
    cancelAnimationFrame: window.cancelAnimationFrame.bind(window),
    requestIdleCallback: window.requestIdleCallback?.bind(window),
    cancelIdleCallback: window.cancelIdleCallback?.bind(window),
    performance: { now: realNow, timeOrigin: performance.timeOrigin },
    Intl: window.Intl,
    Date: RealDate,
    AbortSignal: window.AbortSignal,
    Temporal: win.Temporal,
  };
  Object.defineProperty(window, "__pwClock", {
    value: { builtins },
    configurable: true,
    enumerable: false,
    writable: true,
  });
}

/** Page errors inside callbacks surface as uncaught errors (the engine reports them as page
 * errors) without stopping the seek. */
function reportError(error: unknown): void {
  window.reportError(error);
}
