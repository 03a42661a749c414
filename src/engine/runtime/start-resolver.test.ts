// The reference's data-start rules (hyperframes 0.8.170's startResolver), as a table: the grammar,
// references to an element's end with offsets, nested clocks with data-playback-start, unknown ids
// and loops of references.
import { describe, expect, it } from "vitest";
import { createStartResolver, parseStartExpression, type TimingSource } from "./start-resolver";

describe("parseStartExpression", () => {
  const cases: Array<[string | null, ReturnType<typeof parseStartExpression>]> = [
    [null, null],
    ["  ", null],
    ["2.5", { kind: "absolute", value: 2.5 }],
    [" -1 ", { kind: "absolute", value: -1 }],
    ["intro", { kind: "reference", refId: "intro", offset: 0 }],
    ["intro + 0.5", { kind: "reference", refId: "intro", offset: 0.5 }],
    ["intro - 1", { kind: "reference", refId: "intro", offset: -1 }],
    ["intro+2", { kind: "reference", refId: "intro", offset: 2 }],
    ["intro + .25", { kind: "reference", refId: "intro", offset: 0.25 }],
    // A bare id may contain "-": this names #intro-1, as in the reference.
    ["intro-1", { kind: "reference", refId: "intro-1", offset: 0 }],
    ["scene:2.title", { kind: "reference", refId: "scene:2.title", offset: 0 }],
    // `Number()` does not read units; the reference then takes it for an id.
    ["1.5s", { kind: "reference", refId: "1.5s", offset: 0 }],
    ["intro * 2", null],
    ["in tro + 1", null],
    ["+ 1", null],
  ];
  it.each(cases)("%j", (raw, expected) => {
    expect(parseStartExpression(raw)).toEqual(expected);
  });
});

interface Node {
  id: string;
  start?: string;
  duration?: number;
  /** The composition whose clock the start counts on. */
  clock?: string;
  playbackStart?: number;
}

function resolverFor(nodes: Node[]) {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const source: TimingSource<Node> = {
    startAttr: (node) => node.start ?? null,
    clockOf: (node) => (node.clock ? byId.get(node.clock) : undefined),
    playbackStart: (node) => node.playbackStart ?? 0,
    find: (id) => byId.get(id),
    duration: (node) => node.duration,
    describe: (node) => `div#${node.id}`,
  };
  const resolver = createStartResolver(source);
  return {
    start: (id: string) => resolver.start(byId.get(id)!),
    origin: (id: string) => resolver.origin(byId.get(id)!),
    problems: () => resolver.problems(),
  };
}

describe("createStartResolver", () => {
  const page: Node[] = [
    { id: "intro", start: "0", duration: 1 },
    { id: "second", start: "intro", duration: 1.25 },
    { id: "third", start: "second + 0.5", duration: 1 },
    { id: "fourth", start: "third - 0.5", duration: 1.5 },
    { id: "early", start: "intro - 5" },
    { id: "open", start: "1" },
    { id: "after-open", start: "open + 1" },
    { id: "host", start: "fourth", duration: 1, playbackStart: 0.5 },
    { id: "inside", start: "0.25", clock: "host" },
    { id: "late-host", start: "2", playbackStart: 3 },
    { id: "inside-late", start: "intro - 5", clock: "late-host" },
    { id: "plain" },
  ];
  const cases: Array<[string, number]> = [
    ["intro", 0],
    ["second", 1],
    ["third", 2.75],
    ["fourth", 3.25],
    // Never before 0 at the root.
    ["early", 0],
    // A target without a length: the reference counts from its start.
    ["after-open", 2],
    ["host", 4.75],
    // Counted on the host's clock, which reads data-playback-start at the host's start.
    ["inside", 4.75 - 0.5 + 0.25],
    // In a composition whose clock reads 0 before the root's 0, a reference may go that early.
    ["inside-late", -1],
    ["plain", 0],
  ];
  it.each(cases)("%s starts at %d", (id, seconds) => {
    const { start } = resolverFor(page);
    expect(start(id)).toBeCloseTo(seconds, 9);
  });

  it("gives a composition's clock origin as its start less its playback start", () => {
    const { origin } = resolverFor(page);
    expect(origin("host")).toBeCloseTo(4.25, 9);
    expect(origin("late-host")).toBeCloseTo(-1, 9);
  });

  it("starts an unknown reference at 0 and says which element names it", () => {
    const { start, problems } = resolverFor([{ id: "lost", start: "nowhere + 2" }]);
    expect(start("lost")).toBe(0);
    expect(problems()).toEqual([
      { kind: "unknown-reference", element: "div#lost", value: "nowhere + 2" },
    ]);
  });

  it("breaks a loop of references where it closes, in the order asked, and reports it once", () => {
    const loop: Node[] = [
      { id: "a", start: "b + 1", duration: 2 },
      { id: "b", start: "c", duration: 3 },
      { id: "c", start: "a", duration: 4 },
    ];
    const first = resolverFor(loop);
    // a asks b, b asks c, c finds a being resolved: a counts as starting at 0 there, so c starts
    // when a's 2 s end, b after c's 4 s, a 1 s after b's 3 s.
    expect(first.start("a")).toBe(2 + 4 + 3 + 1);
    expect(first.start("b")).toBe(2 + 4);
    expect(first.start("c")).toBe(2);
    expect(first.problems()).toEqual([
      {
        kind: "cycle",
        element: "div#a",
        value: "b + 1",
        loop: ["div#a", "div#b", "div#c", "div#a"],
      },
    ]);
    // Asked from another element, the loop closes elsewhere.
    const second = resolverFor(loop);
    expect(second.start("c")).toBe(4 + 3 + 1 + 2);
  });

  it("breaks a self-reference", () => {
    const { start, problems } = resolverFor([{ id: "me", start: "me + 1", duration: 2 }]);
    expect(start("me")).toBe(3);
    expect(problems().map((problem) => problem.kind)).toEqual(["cycle"]);
  });

  it("reports a start that is neither seconds nor a reference and counts it from its clock", () => {
    const { start, problems } = resolverFor([
      { id: "host", start: "2" },
      { id: "odd", start: "intro * 2", clock: "host" },
    ]);
    expect(start("odd")).toBe(2);
    expect(problems()).toEqual([{ kind: "unparsed", element: "div#odd", value: "intro * 2" }]);
  });
});
