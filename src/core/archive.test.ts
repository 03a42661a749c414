import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, readdir, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import yauzl from "yauzl";
import { describe, expect, it } from "vitest";
import { buildArchive, checkUploadLimit, inspectArchive, listProjectFiles } from "./archive";
import { ClientError } from "./errors";

const HTML = `<div data-composition-id="main" data-width="1920" data-height="1080" data-duration="1"></div>`;

async function project(files: Record<string, string | Buffer>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "svc-archive-test-"));
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(root, name, ".."), { recursive: true });
    await writeFile(join(root, name), content);
  }
  return root;
}

function zipEntries(file: string): Promise<Array<{ name: string; mtime: number }>> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      const names: Array<{ name: string; mtime: number }> = [];
      zip.on("entry", (entry: yauzl.Entry) => {
        names.push({ name: entry.fileName, mtime: entry.getLastModDate().getTime() });
        zip.readEntry();
      });
      zip.on("end", () => resolve(names));
      zip.on("error", reject);
      zip.readEntry();
    });
  });
}

describe("project archive", () => {
  it("leaves out outputs, development folders, dotfiles and .svcignore matches", async () => {
    const root = await project({
      "index.html": HTML,
      "assets/logo.svg": "<svg/>",
      "renders/old.mp4": "x",
      "snapshots/a.png": "x",
      "scenes/renders/keep.html": "nested renders/ is not the root one",
      ".git/config": "x",
      "node_modules/gsap/index.js": "x",
      "dist/bundle.js": "x",
      ".next/cache": "x",
      "coverage/lcov.info": "x",
      ".env": "SECRET=1",
      "assets/.DS_Store": "x",
      "drafts/wip.html": "x",
      "notes.md": "x",
      ".svcignore": "drafts/\n*.md\n",
    });
    const files = await listProjectFiles(root);
    expect(files.map((f) => f.path)).toEqual([
      "assets/logo.svg",
      "index.html",
      "scenes/renders/keep.html",
    ]);
  });

  it("gives byte-identical zips for the same project whatever the file times, with sorted entries", async () => {
    const root = await project({
      "index.html": HTML,
      "b.css": "b{}",
      "a/z.js": "1",
      "a/b.js": "2",
    });
    const first = await buildArchive(root, { composition: "index.html" });
    await utimes(join(root, "b.css"), new Date(2001, 1, 1), new Date(2001, 1, 1));
    const second = await buildArchive(root, { composition: "index.html" });
    try {
      expect(second.sha256).toBe(first.sha256);
      const bytes = await readFile(first.path);
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(first.sha256);
      expect(bytes.length).toBe(first.sizeBytes);
      const entries = await zipEntries(first.path);
      expect(entries.map((e) => e.name)).toEqual(["a/b.js", "a/z.js", "b.css", "index.html"]);
      expect(new Set(entries.map((e) => e.mtime)).size).toBe(1);
    } finally {
      await first.dispose();
      await second.dispose();
    }
  });

  it("keeps entries in sorted order for many files built at the same time", async () => {
    const files: Record<string, string | Buffer> = { "index.html": HTML };
    for (let i = 0; i < 60; i++)
      files[`f/${String(i).padStart(2, "0")}.bin`] = randomBuffer(50 + ((i * 7919) % 4000));
    const root = await project(files);
    const archives = await Promise.all(
      [1, 2, 3].map(() => buildArchive(root, { composition: "index.html" })),
    );
    try {
      expect(new Set(archives.map((a) => a.sha256)).size).toBe(1);
      const names = (await zipEntries(archives[0]!.path)).map((e) => e.name);
      expect(names).toEqual([...names].sort());
      expect(names).toHaveLength(61);
    } finally {
      await Promise.all(archives.map((a) => a.dispose()));
    }
  });

  it("refuses a project whose entry file is excluded by .svcignore", async () => {
    const root = await project({ "index.html": HTML, ".svcignore": "*.html\n" });
    await expect(buildArchive(root, { composition: "index.html" })).rejects.toMatchObject({
      code: "composition_excluded",
      hint: expect.stringContaining(".svcignore"),
    });
  });

  it("refuses an archive over the upload limit and lists the ten largest files, largest first", async () => {
    const files: Record<string, Buffer | string> = { "index.html": HTML };
    for (let i = 1; i <= 12; i++)
      files[`media/clip${String(i).padStart(2, "0")}.bin`] = randomBuffer(i * 1000);
    const root = await project(files);
    const archive = await buildArchive(root, {
      composition: "index.html",
      uploadLimitBytes: 20_000,
    });
    try {
      expect(archive.report.exceeds_upload_limit).toBe(true);
      expect(archive.report.largest_files).toHaveLength(10);
      expect(archive.report.largest_files[0]).toEqual({
        path: "media/clip12.bin",
        size_bytes: 12_000,
      });
      let error: unknown;
      try {
        checkUploadLimit(archive);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ClientError);
      const message = (error as ClientError).message;
      expect(message).toContain("media/clip12.bin");
      expect(message).toContain("media/clip03.bin");
      expect(message).not.toContain("media/clip02.bin");
    } finally {
      await archive.dispose();
    }
  });

  it("dry run reports size, count and largest files and leaves no zip behind", async () => {
    const root = await project({ "index.html": HTML, "big.bin": randomBuffer(5000) });
    const temp = await mkdtemp(join(tmpdir(), "svc-archive-tmp-"));
    const report = await inspectArchive(root, { composition: "index.html", tempDir: temp });
    expect(report).toEqual({
      project: root,
      file_count: 2,
      size_bytes: expect.any(Number),
      upload_limit_bytes: 200 * 1024 * 1024,
      exceeds_upload_limit: false,
      largest_files: [
        { path: "big.bin", size_bytes: 5000 },
        { path: "index.html", size_bytes: HTML.length },
      ],
    });
    expect(report.size_bytes).toBeGreaterThan(5000);
    expect(await readdir(temp)).toEqual([]);
  });
});

function randomBuffer(size: number): Buffer {
  // Incompressible but reproducible bytes.
  const out = Buffer.alloc(size);
  let seed = size;
  for (let i = 0; i < size; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out[i] = seed >> 16;
  }
  return out;
}
