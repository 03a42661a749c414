import { describe, expect, it } from "vitest";
import { frameCount } from "./frames";

describe("frameCount", () => {
  it("counts a started frame, as the format does (ceil)", () => {
    // The three compositions that rendered one frame fewer than the reference under round().
    expect(frameCount(3.475, 4)).toBe(14); // 13.9 frames: ceil and round agree
    expect(frameCount(1.3, 4)).toBe(6); // 5.2 frames: round gave 5
    expect(frameCount(2.55, 4)).toBe(11); // 10.2 frames: round gave 10
  });

  it("snaps a product within 1e-3 of a whole number to it", () => {
    expect(frameCount(10, 30)).toBe(300);
    expect(frameCount(1.00001, 30)).toBe(30);
    expect(frameCount(0.1 * 3, 10)).toBe(3); // 3.0000000000000004
    expect(frameCount(1.0001, 30)).toBe(31); // 30.003 frames: past the snap, a started frame
  });

  it("is 0 for nothing to draw", () => {
    expect(frameCount(0, 30)).toBe(0);
    expect(frameCount(-1, 30)).toBe(0);
    expect(frameCount(Number.NaN, 30)).toBe(0);
  });
});
