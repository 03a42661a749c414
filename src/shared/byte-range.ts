// HTTP `Range: bytes=...` for every server that sends stored files (videos that browsers seek
// in): the service's local storage, the desktop and engine file servers (src/node/static-files.ts)
// and the template. One range only; a header that is not a valid byte range (another unit, several
// ranges, an end before its start) is ignored (RFC 9110 sections 14.1.1 and 14.2: the whole file
// is sent), and a valid range that starts past the end is "unsatisfiable" (416).

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

/** The range a `Range` header asks of a file of `size` bytes; undefined means the whole file. */
export function parseByteRange(
  header: string | undefined,
  size: number,
): ByteRange | "unsatisfiable" | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  let start: number;
  let end: number;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0) return "unsatisfiable";
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    if (match[2] !== "" && Number(match[2]) < start) return undefined;
    end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size) return "unsatisfiable";
  return { start, end };
}
