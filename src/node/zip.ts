// Zip writing for the product, with archiver (a well-kept library): the client's project archives
// (src/core/archive.ts) and the service's zip of a single-HTML `url` project. Hostile archives for
// tests are built elsewhere (src/server/testing/zip-builder.ts).
import { createRequire } from "node:module";
import type { Archiver, ZipOptions } from "archiver";

// The installed archiver is 7.x (a CommonJS factory) while @types/archiver describes the 8.x class
// API; the factory is loaded through require and given the shared instance type.
export const createZip = createRequire(import.meta.url)("archiver") as (
  format: "zip",
  options: ZipOptions & { statConcurrency?: number },
) => Archiver;

/** Timestamp of every entry (the earliest a zip can hold), so the bytes never depend on mtimes. */
export const FIXED_ZIP_DATE = new Date("1980-01-01T00:00:00Z");

/** A zip of in-memory files (deflated), as one buffer: the same files give the same bytes. */
export async function zipBuffers(entries: Array<{ name: string; data: Buffer }>): Promise<Buffer> {
  const zip = createZip("zip", { zlib: { level: 9 }, forceLocalTime: false });
  const chunks: Buffer[] = [];
  zip.on("data", (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    zip.on("end", () => resolve());
    zip.on("error", reject);
  });
  for (const entry of entries) {
    zip.append(entry.data, { name: entry.name, date: FIXED_ZIP_DATE, mode: 0o644 });
  }
  await zip.finalize();
  await ended;
  return Buffer.concat(chunks);
}
