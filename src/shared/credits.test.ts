import { describe, expect, it } from "vitest";
import { creditsFor } from "./credits";

describe("creditsFor", () => {
  it("charges every started second, at least one", () => {
    expect(creditsFor(1.2, "1080p")).toBe(2);
    expect(creditsFor(0.01, "1080p")).toBe(1);
    expect(creditsFor(4, "1080p")).toBe(4);
    expect(creditsFor(2.0000001, "1080p")).toBe(2);
  });

  it("bills 4k at one and a half times", () => {
    expect(creditsFor(1.2, "4k")).toBe(3);
    expect(creditsFor(0.01, "4k")).toBe(1.5);
    expect(creditsFor(3, "4k")).toBe(4.5);
  });
});
