// Hostile-archive checks for uploaded project zips, and safe extraction. Every archive is read
// completely once (decompressing into a counter) so declared sizes cannot lie; entry names are
// checked by us, not trusted to the zip library, and extraction resolves each path under the
// destination and refuses anything that would leave it.
import { createWriteStream } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { dirname, resolve, sep } from "node:path";
import { Writable, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import yauzl from "yauzl";
import type { ApiErrorCode } from "../../shared/api";

export const MAX_ARCHIVE_ENTRIES = 10_000;
/**
 * The most a whole archive may unpack to. Five times the largest upload (200 MiB): projects are
 * mostly media that zip does not shrink, and a worker keeps unpacked projects in its cache.
 */
export const MAX_UNCOMPRESSED_BYTES = 1024 * 1024 * 1024;
/**
 * The most a whole archive may unpack to per byte of zip, past MIN_RATIO_CHECK_BYTES in all: many
 * small entries of zeros each pass a per-entry check (issue 41: 480 x 4 MiB from an 8.8 MB zip).
 * Text of a real project packs 3-10 times; 50 leaves room for the most repetitive data files.
 */
export const MAX_ARCHIVE_RATIO = 50;
/** An entry that inflates more than this many times, past MIN_RATIO_CHECK_BYTES, is a bomb. */
export const MAX_COMPRESSION_RATIO = 100;
export const MIN_RATIO_CHECK_BYTES = 4 * 1024 * 1024;

export type ArchiveErrorCode = Extract<
  ApiErrorCode,
  | "svc_archive_corrupt"
  | "svc_archive_unsafe_path"
  | "svc_archive_symlink"
  | "svc_archive_too_many_entries"
  | "svc_archive_bomb"
>;

export class ArchiveError extends Error {
  override readonly name = "ArchiveError";
  constructor(
    readonly code: ArchiveErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface ArchiveSummary {
  /** File entries (no directories), with forward slashes. */
  files: string[];
  uncompressedBytes: number;
}

interface EntryVisit {
  name: string;
  isDirectory: boolean;
  open: () => Promise<Readable>;
}

/** Checks an archive without writing anything. Throws ArchiveError with the reason. */
export async function inspectZip(file: string): Promise<ArchiveSummary> {
  return walkZip(file, async (entry) => {
    if (entry.isDirectory) return;
    await pipeline(await entry.open(), discard());
  });
}

/** Extracts an archive into destDir, applying the same checks as inspectZip. */
export async function extractZip(file: string, destDir: string): Promise<ArchiveSummary> {
  const root = resolve(destDir);
  await mkdir(root, { recursive: true });
  return walkZip(file, async (entry) => {
    const target = resolve(root, entry.name);
    if (target !== root && !target.startsWith(root + sep)) {
      throw new ArchiveError(
        "svc_archive_unsafe_path",
        `entry "${entry.name}" would be written outside the project`,
      );
    }
    if (entry.isDirectory) {
      await mkdir(target, { recursive: true });
      return;
    }
    await mkdir(dirname(target), { recursive: true });
    await pipeline(await entry.open(), createWriteStream(target, { flags: "wx" }));
  });
}

/** Reads one file of the archive (at most maxBytes), or undefined when there is no such entry. */
export async function readZipEntry(
  file: string,
  name: string,
  maxBytes: number,
): Promise<Buffer | undefined> {
  let found: Buffer | undefined;
  await walkZip(file, async (entry) => {
    if (entry.isDirectory || entry.name !== name || found) return;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of await entry.open()) {
      size += (chunk as Buffer).length;
      if (size > maxBytes)
        throw new ArchiveError("svc_archive_bomb", `"${name}" is larger than ${maxBytes} bytes`);
      chunks.push(chunk as Buffer);
    }
    found = Buffer.concat(chunks);
  });
  return found;
}

/** Normalizes and checks one entry name; throws for absolute paths, `..` and NUL. */
export function checkEntryName(raw: string): string {
  const name = raw.replace(/\\/g, "/");
  if (name.includes("\0"))
    throw new ArchiveError("svc_archive_unsafe_path", `entry name contains a NUL byte`);
  if (name.startsWith("/") || /^[A-Za-z]:/.test(name)) {
    throw new ArchiveError("svc_archive_unsafe_path", `entry "${raw}" has an absolute path`);
  }
  if (name.split("/").some((part) => part === "..")) {
    throw new ArchiveError(
      "svc_archive_unsafe_path",
      `entry "${raw}" climbs out of the project with ".."`,
    );
  }
  return name;
}

/** How to fix an archive refused for its size, in the words of the API answer. */
const BOMB_HINT =
  "Zip the project's files as they are (svc cloud render does), without padding or generated filler.";

/**
 * Checks the whole archive's declared sizes (its central directory, before any entry is
 * inflated): total unpacked bytes and the ratio of those to the zip's own size. The per-entry
 * walk then proves the declared sizes (validateEntrySizes), so a lie fails there.
 */
async function checkDeclaredTotals(file: string): Promise<void> {
  const { size } = await stat(file);
  let total = 0;
  await new Promise<void>((done, fail) => {
    yauzl.open(file, { lazyEntries: true, decodeStrings: false, autoClose: true }, (error, zip) => {
      if (error || !zip) {
        fail(
          new ArchiveError(
            "svc_archive_corrupt",
            `not a readable zip archive (${error?.message ?? "unknown error"})`,
          ),
        );
        return;
      }
      if (zip.entryCount > MAX_ARCHIVE_ENTRIES) {
        zip.close();
        done(); // walkZip refuses it with its own code
        return;
      }
      zip.on("error", (cause: Error) =>
        fail(new ArchiveError("svc_archive_corrupt", `the archive is damaged (${cause.message})`)),
      );
      zip.on("end", () => done());
      zip.on("entry", (entry: yauzl.Entry) => {
        total += entry.uncompressedSize;
        zip.readEntry();
      });
      zip.readEntry();
    });
  });
  if (total > MAX_UNCOMPRESSED_BYTES) {
    throw new ArchiveError(
      "svc_archive_bomb",
      `the archive unpacks to ${total} bytes; at most ${MAX_UNCOMPRESSED_BYTES} are allowed. ${BOMB_HINT}`,
    );
  }
  if (total > MIN_RATIO_CHECK_BYTES && total > MAX_ARCHIVE_RATIO * Math.max(1, size)) {
    throw new ArchiveError(
      "svc_archive_bomb",
      `the archive unpacks to ${total} bytes from ${size}, more than ${MAX_ARCHIVE_RATIO} times its size, as compression bombs do. ${BOMB_HINT}`,
    );
  }
}

async function walkZip(
  file: string,
  visit: (entry: EntryVisit) => Promise<void>,
): Promise<ArchiveSummary> {
  await checkDeclaredTotals(file);
  return new Promise((resolvePromise, reject) => {
    yauzl.open(
      file,
      { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: true },
      (openError, zip) => {
        if (openError || !zip) {
          reject(
            new ArchiveError(
              "svc_archive_corrupt",
              `not a readable zip archive (${openError?.message ?? "unknown error"})`,
            ),
          );
          return;
        }
        if (zip.entryCount > MAX_ARCHIVE_ENTRIES) {
          zip.close();
          reject(
            new ArchiveError(
              "svc_archive_too_many_entries",
              `the archive has ${zip.entryCount} entries; at most ${MAX_ARCHIVE_ENTRIES} are allowed`,
            ),
          );
          return;
        }
        const summary: ArchiveSummary = { files: [], uncompressedBytes: 0 };
        let settled = false;
        const fail = (error: unknown) => {
          if (settled) return;
          settled = true;
          zip.close();
          reject(
            error instanceof ArchiveError
              ? error
              : new ArchiveError(
                  "svc_archive_corrupt",
                  `the archive is damaged (${(error as Error).message})`,
                ),
          );
        };
        zip.on("error", fail);
        zip.on("end", () => {
          if (settled) return;
          settled = true;
          resolvePromise(summary);
        });
        zip.on("entry", (entry: yauzl.Entry) => {
          void (async () => {
            const rawName = Buffer.isBuffer(entry.fileName)
              ? (entry.fileName as Buffer).toString(
                  entry.generalPurposeBitFlag & 0x800 ? "utf8" : "latin1",
                )
              : String(entry.fileName);
            const name = checkEntryName(rawName);
            const mode = (entry.externalFileAttributes >>> 16) & 0o170000;
            if (mode === 0o120000) {
              throw new ArchiveError("svc_archive_symlink", `entry "${name}" is a symbolic link`);
            }
            summary.uncompressedBytes += entry.uncompressedSize;
            if (summary.uncompressedBytes > MAX_UNCOMPRESSED_BYTES) {
              throw new ArchiveError(
                "svc_archive_bomb",
                `the archive expands to more than ${MAX_UNCOMPRESSED_BYTES} bytes`,
              );
            }
            if (
              entry.uncompressedSize > MIN_RATIO_CHECK_BYTES &&
              entry.uncompressedSize > MAX_COMPRESSION_RATIO * Math.max(1, entry.compressedSize)
            ) {
              throw new ArchiveError(
                "svc_archive_bomb",
                `entry "${name}" has a suspicious compression ratio (${entry.uncompressedSize} bytes from ${entry.compressedSize})`,
              );
            }
            const isDirectory = name.endsWith("/");
            if (!isDirectory) summary.files.push(name);
            await visit({
              name,
              isDirectory,
              open: () =>
                new Promise<Readable>((ok, ko) =>
                  zip.openReadStream(entry, (error, stream) =>
                    error || !stream ? ko(error) : ok(stream),
                  ),
                ),
            });
            if (!settled) zip.readEntry();
          })().catch(fail);
        });
        zip.readEntry();
      },
    );
  });
}

function discard(): Writable {
  return new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
}
