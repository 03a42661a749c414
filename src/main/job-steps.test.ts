import { describe, expect, it } from "vitest";
import { titledFileName } from "./job-steps";

describe("a render's file name", () => {
  const createdAt = new Date(2026, 10, 26, 14, 30).getTime();
  it("is the job's title and the day, never an id; taken names get (2), (3)", () => {
    const job = { title: "lower-third · Grace Hopper", createdAt };
    expect(titledFileName(job, { format: "mp4" }, "/out", () => false)).toBe(
      "lower-third Grace Hopper 2026-11-26.mp4",
    );
    const taken = new Set(["/out/lower-third Grace Hopper 2026-11-26.mp4"]);
    expect(titledFileName(job, { format: "webm" }, "/out", (p) => taken.has(p))).toBe(
      "lower-third Grace Hopper 2026-11-26.webm",
    );
    taken.add("/out/lower-third Grace Hopper 2026-11-26 (2).mp4");
    expect(titledFileName(job, { format: "mp4" }, "/out", (p) => taken.has(p))).toBe(
      "lower-third Grace Hopper 2026-11-26 (3).mp4",
    );
  });

  it("keeps letters of any language and drops what a file name cannot hold", () => {
    const job = { title: 'Straße: "Ünïcode" / ../x', createdAt };
    expect(titledFileName(job, { format: "mov" }, "/out", () => false)).toBe(
      "Straße Ünïcode .. x 2026-11-26.mov",
    );
  });
});
