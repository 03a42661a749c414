import { describe, expect, it } from "vitest";
import { mergeByRevision, newestOf } from "./queued-renders";

const queuedRender = (id: string, revision: number, status: string) => ({ id, revision, status });

describe("the queue cache", () => {
  it("keeps a finished queued render finished when the answer that queued it arrives after its events", () => {
    const afterEvents = [queuedRender("b", 5, "completed"), queuedRender("a", 9, "completed")];
    const merged = mergeByRevision(afterEvents, queuedRender("b", 0, "waiting"));
    expect(merged.find((item) => item.id === "b")?.status).toBe("completed");
  });

  it("puts a queued render it has not seen first", () => {
    expect(
      mergeByRevision([queuedRender("a", 1, "completed")], queuedRender("b", 0, "waiting")),
    ).toEqual([queuedRender("b", 0, "waiting"), queuedRender("a", 1, "completed")]);
  });

  it("keeps a cached copy newer than the fetched list's, and takes the list's membership", () => {
    const cached = [queuedRender("a", 7, "completed"), queuedRender("gone", 3, "failed")];
    const fetched = [queuedRender("a", 4, "running"), queuedRender("new", 0, "waiting")];
    expect(newestOf(fetched, cached)).toEqual([
      queuedRender("a", 7, "completed"),
      queuedRender("new", 0, "waiting"),
    ]);
  });
});
