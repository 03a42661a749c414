// Project archives (SPEC.md section 6): which files go in (default excludes + `.svcignore` with
// gitignore syntax through the `ignore` package) and the zip itself, written with `archiver` (src/node/zip.ts).
// The bytes are deterministic — entries sorted, fixed timestamps and modes — so the same project
// always gives the same SHA-256 and the service can recognise a re-upload. The zip is streamed to
// a temp file while it is hashed; the 200 MiB limit is checked before anything is uploaded.
import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { lstat, readdir, readFile, realpath, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import ignore, { type Ignore } from "ignore";
import { formatBytes, type ArchiveReport } from "../shared/archive-report";
import { UPLOAD_LIMIT_BYTES } from "../shared/limits";
import { createZip, FIXED_ZIP_DATE } from "../node/index";
import { ClientError, interruptedError } from "./errors";

/** Always left out: root-level outputs, development-only folders and dotfiles. */
export const DEFAULT_EXCLUDES = [
  "/renders/",
  "/snapshots/",
  ".git",
  "node_modules/",
  "dist/",
  ".next/",
  "coverage/",
  ".*",
];

export const IGNORE_FILE = ".svcignore";

export interface ProjectFile {
  /** Path inside the project, forward slashes. */
  path: string;
  absolutePath: string;
  sizeBytes: number;
}

export interface BuiltArchive {
  /** The zip in a temp file; call `dispose()` when done with it. */
  path: string;
  sizeBytes: number;
  sha256: string;
  files: ProjectFile[];
  report: ArchiveReport;
  dispose(): Promise<void>;
}

async function loadIgnore(root: string): Promise<Ignore> {
  const rules = ignore().add(DEFAULT_EXCLUDES);
  try {
    rules.add(await readFile(join(root, IGNORE_FILE), "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return rules;
}

/** The files that go into the archive, sorted by path (byte order, so the zip is stable). */
export async function listProjectFiles(root: string): Promise<ProjectFile[]> {
  const rules = await loadIgnore(root);
  const realRoot = await realpath(root);
  const files: ProjectFile[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    for (const entry of entries) {
      const absolutePath = join(dir, entry.name);
      const path = relative(root, absolutePath).split(sep).join("/");
      let isDirectory = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        // A link is followed only when it stays inside the project; the zip holds plain files.
        const target = await realpath(absolutePath).catch(() => undefined);
        if (!target || !(target === realRoot || target.startsWith(realRoot + sep))) continue;
        const info = await stat(target);
        isDirectory = info.isDirectory();
        isFile = info.isFile();
      }
      if (isDirectory) {
        if (!rules.ignores(`${path}/`)) await walk(absolutePath);
      } else if (isFile && !rules.ignores(path)) {
        files.push({ path, absolutePath, sizeBytes: (await stat(absolutePath)).size });
      }
    }
  };
  await walk(root);
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export function largestFiles(files: ProjectFile[], count = 10): ArchiveReport["largest_files"] {
  return [...files]
    .sort((a, b) => b.sizeBytes - a.sizeBytes || (a.path < b.path ? -1 : 1))
    .slice(0, count)
    .map((file) => ({ path: file.path, size_bytes: file.sizeBytes }));
}

export interface BuildArchiveOptions {
  /** Entry file (forward slashes); it must be among the archived files. */
  composition: string;
  /** Folder for the temp zip (default: the OS temp folder). */
  tempDir?: string;
  /** Override of the 200 MiB limit (tests). */
  uploadLimitBytes?: number;
  signal?: AbortSignal;
}

/** Zips the project to a temp file, hashing it on the way. Does not enforce the limit. */
export async function buildArchive(
  root: string,
  options: BuildArchiveOptions,
): Promise<BuiltArchive> {
  const files = await listProjectFiles(root);
  if (!files.some((file) => file.path === options.composition)) {
    const exists = await lstat(join(root, options.composition)).then(
      () => true,
      () => false,
    );
    throw new ClientError(
      exists ? "composition_excluded" : "composition_missing",
      exists
        ? `The entry file ${options.composition} is excluded from the archive.`
        : `The entry file ${options.composition} is not in ${root}.`,
      exists
        ? `Remove the rule that matches it from ${IGNORE_FILE} (dotfiles and ${DEFAULT_EXCLUDES.slice(0, 2).join(", ")} are always excluded).`
        : "Create it, or name another entry file.",
    );
  }
  const path = join(
    options.tempDir ?? tmpdir(),
    `svc-archive-${randomBytes(6).toString("hex")}.zip`,
  );
  const hash = createHash("sha256");
  let sizeBytes = 0;
  // archiver stats files in parallel and queues each entry when its stat returns: one at a time
  // keeps the entries in our sorted order.
  const zip = createZip("zip", { zlib: { level: 9 }, forceLocalTime: false, statConcurrency: 1 });
  for (const file of files) {
    zip.file(file.absolutePath, { name: file.path, date: FIXED_ZIP_DATE, mode: 0o644 });
  }
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      sizeBytes += chunk.length;
      callback(null, chunk);
    },
  });
  const onAbort = () => zip.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    void zip.finalize();
    await pipeline(zip, hashing, createWriteStream(path), { signal: options.signal });
  } catch (error) {
    await rm(path, { force: true });
    if (options.signal?.aborted) throw interruptedError();
    throw error;
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
  const limit = options.uploadLimitBytes ?? UPLOAD_LIMIT_BYTES;
  return {
    path,
    sizeBytes,
    sha256: hash.digest("hex"),
    files,
    report: {
      project: root,
      file_count: files.length,
      size_bytes: sizeBytes,
      upload_limit_bytes: limit,
      exceeds_upload_limit: sizeBytes > limit,
      largest_files: largestFiles(files),
    },
    dispose: () => rm(path, { force: true }),
  };
}

/** Refuses an archive over the limit, naming the ten largest files so the user knows what to cut. */
export function checkUploadLimit(archive: BuiltArchive): void {
  const { report } = archive;
  if (!report.exceeds_upload_limit) return;
  const list = report.largest_files
    .map((file) => `  ${formatBytes(file.size_bytes).padStart(10)}  ${file.path}`)
    .join("\n");
  throw new ClientError(
    "svc_project_too_large",
    `The project archive is ${formatBytes(report.size_bytes)}, over the ${formatBytes(report.upload_limit_bytes)} upload limit. Largest files:\n${list}`,
    `Exclude what the composition does not need in ${IGNORE_FILE} (gitignore syntax), or shrink large media.`,
  );
}

/** The dry run: builds the zip to learn its real size, reports it, and deletes it. */
export async function inspectArchive(
  root: string,
  options: BuildArchiveOptions,
): Promise<ArchiveReport> {
  const archive = await buildArchive(root, options);
  await archive.dispose();
  return archive.report;
}
