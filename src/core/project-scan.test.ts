import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scanProject } from "./project-scan";

async function projectOf(width: number, height: number, extra = ""): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "svc-scan-test-"));
  await writeFile(
    join(root, "index.html"),
    `<html${extra}><body><div data-composition-id="m" data-width="${width}" data-height="${height}" data-duration="3"></div></body></html>`,
  );
  return root;
}

describe("project scan", () => {
  it("detects 16:9, 9:16 and 1:1 within +-0.05", async () => {
    for (const [width, height, ratio] of [
      [1920, 1080, "16:9"],
      [1080, 1920, "9:16"],
      [1080, 1080, "1:1"],
      [1900, 1080, "16:9"],
      [1040, 1000, "1:1"],
    ] as const) {
      const scan = await scanProject(await projectOf(width, height));
      expect(scan.aspectRatio, `${width}x${height}`).toBe(ratio);
    }
  });

  it("reads duration, entry file and variables schema", async () => {
    const root = await projectOf(
      1920,
      1080,
      ` data-composition-variables='[{"id":"title","type":"string","default":"Hi"}]'`,
    );
    const scan = await scanProject(root);
    expect(scan).toMatchObject({ root, composition: "index.html", duration: 3, width: 1920 });
    expect(scan.variables.map((v) => v.id)).toEqual(["title"]);
  });

  it("refuses an explicit aspect ratio that conflicts with the composition (usage error)", async () => {
    await expect(
      scanProject(await projectOf(1080, 1920), { aspectRatio: "16:9" }),
    ).rejects.toMatchObject({
      usage: true,
      message: expect.stringContaining("conflicts with the composition, which is 1080x1920 (9:16)"),
    });
    const scan = await scanProject(await projectOf(1080, 1920), { aspectRatio: "9:16" });
    expect(scan.aspectRatio).toBe("9:16");
  });

  it("refuses sizes outside the tolerance, missing entry files and paths outside the project", async () => {
    await expect(scanProject(await projectOf(2000, 1080))).rejects.toMatchObject({
      code: "aspect_unsupported",
    });
    const root = await projectOf(1920, 1080);
    await expect(scanProject(root, { composition: "missing.html" })).rejects.toMatchObject({
      code: "composition_not_found",
    });
    await expect(scanProject(root, { composition: "../index.html" })).rejects.toMatchObject({
      usage: true,
    });
    await mkdir(join(root, "scenes"));
    await writeFile(
      join(root, "scenes", "b.html"),
      `<div data-composition-id="b" data-width="1080" data-height="1080"></div>`,
    );
    expect((await scanProject(root, { composition: "scenes/b.html" })).aspectRatio).toBe("1:1");
  });
});
