import { describe, expect, it } from "vitest";
import { titledFileName } from "./queued-render-steps";

describe("a render's file name", () => {
  const createdAt = new Date(2026, 10, 26, 14, 30).getTime();
  it("is the queued render's title and the day, never an id; taken names get (2), (3)", () => {
    const queuedRender = { title: "lower-third · Grace Hopper", createdAt };
    expect(titledFileName(queuedRender, { format: "mp4" }, "/out", () => false)).toBe(
      "lower-third Grace Hopper 2026-11-26.mp4",
    );
    const taken = new Set(["/out/lower-third Grace Hopper 2026-11-26.mp4"]);
    expect(titledFileName(queuedRender, { format: "webm" }, "/out", (p) => taken.has(p))).toBe(
      "lower-third Grace Hopper 2026-11-26.webm",
    );
    taken.add("/out/lower-third Grace Hopper 2026-11-26 (2).mp4");
    expect(titledFileName(queuedRender, { format: "mp4" }, "/out", (p) => taken.has(p))).toBe(
      "lower-third Grace Hopper 2026-11-26 (3).mp4",
    );
  });

  it("keeps letters of any language and drops what a file name cannot hold", () => {
    const queuedRender = { title: 'Straße: "Ünïcode" / ../x', createdAt };
    expect(titledFileName(queuedRender, { format: "mov" }, "/out", () => false)).toBe(
      "Straße Ünïcode .. x 2026-11-26.mov",
    );
  });
});
