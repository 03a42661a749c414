import { describe, expect, it } from "vitest";
import { mergeByRevision, newestOf } from "./jobs";

const job = (id: string, revision: number, status: string) => ({ id, revision, status });

describe("the queue cache", () => {
  it("keeps a finished job finished when the answer that queued it arrives after its events", () => {
    const afterEvents = [job("b", 5, "completed"), job("a", 9, "completed")];
    const merged = mergeByRevision(afterEvents, job("b", 0, "waiting"));
    expect(merged.find((item) => item.id === "b")?.status).toBe("completed");
  });

  it("puts a job it has not seen first", () => {
    expect(mergeByRevision([job("a", 1, "completed")], job("b", 0, "waiting"))).toEqual([
      job("b", 0, "waiting"),
      job("a", 1, "completed"),
    ]);
  });

  it("keeps a cached copy newer than the fetched list's, and takes the list's membership", () => {
    const cached = [job("a", 7, "completed"), job("gone", 3, "failed")];
    const fetched = [job("a", 4, "running"), job("new", 0, "waiting")];
    expect(newestOf(fetched, cached)).toEqual([job("a", 7, "completed"), job("new", 0, "waiting")]);
  });
});
