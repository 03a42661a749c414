import { describe, expect, it } from "vitest";
import { parseByteRange } from "./byte-range";

describe("parseByteRange", () => {
  it("reads a closed, an open and a suffix range", () => {
    expect(parseByteRange("bytes=0-99", 1000)).toEqual({ start: 0, end: 99 });
    expect(parseByteRange("bytes=900-", 1000)).toEqual({ start: 900, end: 999 });
    expect(parseByteRange("bytes=-100", 1000)).toEqual({ start: 900, end: 999 });
  });

  it("clamps an end past the file to its last byte", () => {
    expect(parseByteRange("bytes=10-5000", 1000)).toEqual({ start: 10, end: 999 });
  });

  it("sends the whole file for no header or one that is not a byte range", () => {
    expect(parseByteRange(undefined, 1000)).toBeUndefined();
    expect(parseByteRange("bytes=-", 1000)).toBeUndefined();
    expect(parseByteRange("items=0-1", 1000)).toBeUndefined();
    expect(parseByteRange("bytes=0-1,5-6", 1000)).toBeUndefined();
    // An end before its start makes the range invalid, so the header is ignored (RFC 9110 14.1.1).
    expect(parseByteRange("bytes=50-10", 1000)).toBeUndefined();
  });

  it("calls a range past the end or an empty suffix unsatisfiable", () => {
    expect(parseByteRange("bytes=1000-", 1000)).toBe("unsatisfiable");
    expect(parseByteRange("bytes=-0", 1000)).toBe("unsatisfiable");
  });
});
