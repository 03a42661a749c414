// When a clip starts, as the reference runtime (hyperframes) resolves `data-start`: a number is
// seconds on the clock of the composition the clip is in; a name (`intro`) starts the clip when the
// element with that id (or composition id) ends, and `intro + 0.5` / `intro - 1` add an offset to
// that end. Pure: the DOM side (timing.ts) says what each element's attribute, clock, length and
// reference target are, so the rules can be tested as a table (start-resolver.test.ts).

/** A parsed `data-start`. */
export type StartExpression =
  { kind: "absolute"; value: number } | { kind: "reference"; refId: string; offset: number };

/** The characters the reference accepts in a referenced id. */
const REFERENCE_ID = /^[A-Za-z0-9_.:-]+$/;
/** `id + 1.5` / `id - .5` / `id+2`: an id, an operator, an unsigned decimal at the end. */
const REFERENCE_WITH_OFFSET = /^(.*?)\s*([+-])\s*(\d*\.?\d+)$/;

/**
 * The reference's grammar: empty is no start; anything `Number()` reads is seconds; a bare id
 * (letters, digits, `_ . : -`, so `intro-1` is an id, not `intro - 1`) is a reference with no
 * offset; else `id + n` or `id - n`. Anything else (`1.5s`, `intro * 2`) is no start.
 */
export function parseStartExpression(raw: string | null | undefined): StartExpression | null {
  const text = (raw ?? "").trim();
  if (!text) return null;
  const value = Number(text);
  if (Number.isFinite(value)) return { kind: "absolute", value };
  if (REFERENCE_ID.test(text)) return { kind: "reference", refId: text, offset: 0 };
  const match = REFERENCE_WITH_OFFSET.exec(text);
  if (!match) return null;
  const refId = match[1]!.trim();
  const magnitude = Number(match[3]);
  if (!REFERENCE_ID.test(refId) || !Number.isFinite(magnitude)) return null;
  return { kind: "reference", refId, offset: match[2] === "-" ? -magnitude : magnitude };
}

/** What the resolver needs to know about the elements of a page (timing.ts gives the DOM's). */
export interface TimingSource<E> {
  /** The raw `data-start`. */
  startAttr(element: E): string | null;
  /**
   * The composition whose clock a number in `element`'s data-start counts on (its nearest
   * enclosing composition; for a composition host, the one around the host), or undefined for the
   * root's clock (0).
   */
  clockOf(element: E): E | undefined;
  /** A composition host's data-playback-start (else data-media-start), seconds; 0 for others. */
  playbackStart(element: E): number;
  /** The element `data-start="name"` names: by id, else by composition id. */
  find(refId: string): E | undefined;
  /**
   * How long `element` lasts once started at `start` (seconds on the root clock): data-duration,
   * else data-end past the start, else the media's own length, an image's default, a
   * composition's timeline. Undefined when none is known (a reference then counts from its start).
   */
  duration(element: E, start: number): number | undefined;
  /** How the element is named in a message: `div#intro`. */
  describe(element: E): string;
}

/** A data-start that names something that cannot give a time. */
export interface StartProblem {
  kind: "unknown-reference" | "cycle" | "unparsed";
  /** The element whose data-start it is. */
  element: string;
  /** Its data-start as written. */
  value: string;
  /** cycle: the elements around the loop, in order, starting and ending with `element`. */
  loop?: string[];
}

export interface StartResolver<E> {
  /** Seconds on the root clock where `element` starts. */
  start(element: E): number;
  /** Where the clock of composition `element` reads 0: its start less its data-playback-start. */
  origin(element: E): number;
  /** Problems met so far (each element once). */
  problems(): StartProblem[];
}

/**
 * The reference's resolver (its runtime's startResolver, hyperframes 0.8.170): absolute starts are
 * `origin(clock) + max(0, value)`; a reference is `start(target) + duration(target) + offset`,
 * never earlier than `min(0, origin(clock))`; an unknown id starts at 0 (the fallback); a
 * reference back into an element being resolved (a cycle) takes 0 for that element, so which
 * element of a loop comes out where depends on which is asked first, as in the reference (svc
 * asks in document order, as its visibility pass does).
 */
export function createStartResolver<E>(source: TimingSource<E>): StartResolver<E> {
  const starts = new Map<E, number>();
  const visiting: E[] = [];
  const problems: StartProblem[] = [];
  const reported = new Set<E>();

  const report = (element: E, problem: Omit<StartProblem, "element" | "value">) => {
    if (reported.has(element)) return;
    reported.add(element);
    problems.push({
      element: source.describe(element),
      value: source.startAttr(element) ?? "",
      ...problem,
    });
  };

  const originOf = (composition: E | undefined): number =>
    composition === undefined ? 0 : start(composition) - source.playbackStart(composition);

  const compute = (element: E): number => {
    const raw = source.startAttr(element);
    const expression = parseStartExpression(raw);
    if (!expression) {
      if (raw !== null && raw.trim() !== "") report(element, { kind: "unparsed" });
      return originOf(source.clockOf(element));
    }
    if (expression.kind === "absolute") {
      return originOf(source.clockOf(element)) + Math.max(0, expression.value);
    }
    const target = source.find(expression.refId);
    if (target === undefined) {
      report(element, { kind: "unknown-reference" });
      return 0;
    }
    const at = visiting.indexOf(target);
    if (at >= 0) {
      const loop = [...visiting.slice(at), target].map((item) => source.describe(item));
      report(target, { kind: "cycle", loop });
    }
    const targetStart = at >= 0 ? 0 : start(target);
    const length = source.duration(target, targetStart);
    const floor = Math.min(0, originOf(source.clockOf(element)));
    return Math.max(floor, targetStart + (length ?? 0) + expression.offset);
  };

  function start(element: E): number {
    const known = starts.get(element);
    if (known !== undefined) return known;
    // Re-entered through a loop of references: the reference's fallback, 0.
    if (visiting.includes(element)) return 0;
    visiting.push(element);
    try {
      const value = compute(element);
      starts.set(element, value);
      return value;
    } finally {
      visiting.pop();
    }
  }

  return {
    start,
    origin: (element) => originOf(element),
    problems: () => [...problems],
  };
}
