import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateRawSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ArchiveError, extractZip, inspectZip, readZipEntry } from "./zip-inspect";
import { buildZip } from "../testing/zip-builder";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-zip-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function zipFile(name: string, bytes: Buffer): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, bytes);
  return file;
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ArchiveError);
  return (error as ArchiveError).code;
}

describe("inspectZip", () => {
  it("accepts a plain project and lists its files", async () => {
    const file = await zipFile(
      "ok.zip",
      buildZip([
        { name: "index.html", data: "<html></html>", deflate: true },
        { name: "assets/", mode: 0o40755 },
        { name: "assets/logo.svg", data: "<svg/>" },
      ]),
    );
    const summary = await inspectZip(file);
    expect(summary.files).toEqual(["index.html", "assets/logo.svg"]);
    expect((await readZipEntry(file, "index.html", 1000))?.toString()).toBe("<html></html>");
    expect(await readZipEntry(file, "missing.html", 1000)).toBeUndefined();
  });

  it("refuses zip slip, absolute paths and symlinks", async () => {
    expect(
      await refusal(
        inspectZip(await zipFile("slip.zip", buildZip([{ name: "a/../../evil.txt", data: "x" }]))),
      ),
    ).toBe("svc_archive_unsafe_path");
    expect(
      await refusal(
        inspectZip(await zipFile("abs.zip", buildZip([{ name: "/etc/evil", data: "x" }]))),
      ),
    ).toBe("svc_archive_unsafe_path");
    expect(
      await refusal(
        inspectZip(await zipFile("win.zip", buildZip([{ name: "C:\\evil.txt", data: "x" }]))),
      ),
    ).toBe("svc_archive_unsafe_path");
    expect(
      await refusal(
        inspectZip(
          await zipFile(
            "link.zip",
            buildZip([{ name: "link", data: "/etc/passwd", mode: 0o120777 }]),
          ),
        ),
      ),
    ).toBe("svc_archive_symlink");
  });

  it("refuses a compression bomb and an archive that claims more than 1 GiB", async () => {
    const zeros = Buffer.alloc(20 * 1024 * 1024);
    expect(deflateRawSync(zeros).length).toBeLessThan(zeros.length / 100);
    expect(
      await refusal(
        inspectZip(
          await zipFile("bomb.zip", buildZip([{ name: "zeros.bin", data: zeros, deflate: true }])),
        ),
      ),
    ).toBe("svc_archive_bomb");
    const huge = buildZip([
      { name: "a.bin", data: "a", declaredSize: 1_500_000_000, deflate: true },
      { name: "b.bin", data: "b", declaredSize: 1_500_000_000, deflate: true },
    ]);
    expect(await refusal(inspectZip(await zipFile("huge.zip", huge)))).toBe("svc_archive_bomb");
  });

  it("refuses many small entries of zeros by the whole archive's size and ratio", async () => {
    // Issue 41: 480 entries of 4 MiB each pass the per-entry ratio check (4 MiB or less).
    const zeros = Buffer.alloc(4 * 1024 * 1024);
    const bomb = buildZip(
      Array.from({ length: 480 }, (_, i) => ({ name: `z${i}.bin`, data: zeros, deflate: true })),
    );
    const error = await inspectZip(await zipFile("many-zeros.zip", bomb)).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: "svc_archive_bomb",
      message: expect.stringMatching(/unpacks to \d+ bytes.*Zip the project's files as they are/),
    });
    // Nothing was unpacked to find out.
    const target = join(dir, "never");
    expect(await refusal(extractZip(join(dir, "many-zeros.zip"), target))).toBe("svc_archive_bomb");
    expect(await readdir(target)).toEqual([]);
  });

  it("refuses 20,000 entries, truncated archives and non-zip bytes", async () => {
    const many = buildZip(Array.from({ length: 20_000 }, (_, i) => ({ name: `f${i}.txt` })));
    expect(await refusal(inspectZip(await zipFile("many.zip", many)))).toBe(
      "svc_archive_too_many_entries",
    );
    const good = buildZip([
      { name: "index.html", data: "<html>hello</html>".repeat(100), deflate: true },
    ]);
    expect(
      await refusal(inspectZip(await zipFile("cut.zip", good.subarray(0, good.length - 30)))),
    ).toBe("svc_archive_corrupt");
    expect(
      await refusal(
        inspectZip(await zipFile("text.zip", Buffer.from("definitely not a zip file"))),
      ),
    ).toBe("svc_archive_corrupt");
  });

  it("extracts inside the destination only", async () => {
    const dest = join(dir, "out");
    const file = await zipFile("nested.zip", buildZip([{ name: "a/b/c.txt", data: "deep" }]));
    await extractZip(file, dest);
    expect(await readFile(join(dest, "a/b/c.txt"), "utf8")).toBe("deep");
    const slip = await zipFile("slip2.zip", buildZip([{ name: "../escaped.txt", data: "x" }]));
    expect(await refusal(extractZip(slip, join(dir, "out2")))).toBe("svc_archive_unsafe_path");
    expect(await readdir(dir)).not.toContain("escaped.txt");
  });
});
