// `svc templates list`, `svc init --template` and `svc render/still --brand` through the real
// binary: the gallery is found from the package, a project is made whole or not at all, and a
// brand file fills the brand variables under the values given on the command line.
import { execFile } from "node:child_process";
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brandFileText, readBrandFile } from "../core/brand-file";
import { resolveFfmpeg } from "../engine/ffmpeg/ffmpeg";

const ROOT = resolve(import.meta.dirname, "../..");

function svc(args: string[], cwd = ROOT) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      [join(ROOT, "bin", "svc.js"), ...args],
      { timeout: 120_000, cwd },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** A PNG's pixels as grey levels, at a quarter of its size (enough to tell two faces apart). */
async function grey(png: string): Promise<Buffer> {
  const ffmpeg = await resolveFfmpeg();
  return new Promise<Buffer>((done, fail) =>
    execFile(
      ffmpeg.path,
      [
        "-v",
        "error",
        "-i",
        png,
        "-vf",
        "scale=iw/4:ih/4",
        "-f",
        "rawvideo",
        "-pix_fmt",
        "gray",
        "-",
      ],
      { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) => (error ? fail(error) : done(stdout)),
    ),
  );
}

function meanDifference(a: Buffer, b: Buffer): number {
  expect(a.length).toBe(b.length);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-templates-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("svc templates list", () => {
  it("lists every template of the gallery by name, with its sizes, as JSON too", async () => {
    const listed = await svc(["templates", "list", "--json"]);
    expect(listed.code).toBe(0);
    const templates = JSON.parse(listed.stdout) as { name: string; sizes: string[] }[];
    const folders = (await readdir(join(ROOT, "gallery"), { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(templates.map((t) => t.name).sort()).toEqual(folders.sort());
    expect(templates.find((t) => t.name === "social-promo")?.sizes).toEqual([
      "9:16",
      "16:9",
      "1:1",
    ]);
    const text = await svc(["templates", "list"]);
    expect(text.stdout).toMatch(/^social-promo +Social promo \(9:16, 16:9, 1:1\): /m);
  });
});

describe("svc init --template", () => {
  it("makes a project folder from a template, without the template's card", async () => {
    const made = await svc(["init", "promo", "--template", "social-promo"], scratch);
    expect(made.code).toBe(0);
    expect(made.stdout).toContain('Made promo from the "Social promo" template.');
    const files = await readdir(join(scratch, "promo"));
    expect(files.sort()).toEqual(["assets", "index.html"]);
    expect(await readFile(join(scratch, "promo", "index.html"), "utf8")).toBe(
      await readFile(join(ROOT, "gallery", "social-promo", "index.html"), "utf8"),
    );
  });

  it("refuses a folder with files in it and an unknown template, naming the fix", async () => {
    const again = await svc(["init", "promo", "--template", "social-promo"], scratch);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("already has files in it");
    const unknown = await svc(["init", "other", "--template", "no-such"], scratch);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no template named "no-such"[\s\S]*social-promo/);
    expect(await readdir(scratch)).toEqual(["promo"]);
  });
});

describe("--brand", () => {
  it("fills the brand colour from a brand file, under a value given with --variables", async () => {
    const brand = join(scratch, "brand.json");
    await writeFile(
      brand,
      JSON.stringify({ format: "svc-brand-kit/1", colors: { background: "#00ff00" } }),
    );
    const project = join(ROOT, "gallery", "title-card");
    const pixel = async (png: string) => {
      const ffmpeg = await resolveFfmpeg();
      const raw = await new Promise<Buffer>((done, fail) =>
        execFile(
          ffmpeg.path,
          [
            "-v",
            "error",
            "-i",
            png,
            "-vf",
            "crop=1:1:1900:540",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-",
          ],
          { encoding: "buffer" },
          (error, stdout) => (error ? fail(error) : done(stdout)),
        ),
      );
      return [...raw];
    };
    const branded = join(scratch, "branded.png");
    expect(
      (await svc(["still", project, "--brand", brand, "-o", branded, "--time", "2"])).code,
    ).toBe(0);
    const [r, g, b] = await pixel(branded);
    expect(g).toBeGreaterThan(200);
    expect(r! + b!).toBeLessThan(120);
    const mine = join(scratch, "mine.png");
    const given = ["--variables", '{"brand-background":"#0000ff"}'];
    expect(
      (await svc(["still", project, "--brand", brand, ...given, "-o", mine, "--time", "2"])).code,
    ).toBe(0);
    const [r2, g2, b2] = await pixel(mine);
    expect(b2).toBeGreaterThan(200);
    expect(r2! + g2!).toBeLessThan(120);
  });

  it("draws the headline in a font file the brand file names, as it draws no family", async () => {
    // Anton (npm @fontsource, SIL OFL) is a tall condensed face, far from title-card's Montserrat
    // and from the Inter a missing family falls back to: the file, not a fallback, is drawn.
    await copyFile(
      createRequire(import.meta.url).resolve(
        "@fontsource/anton/files/anton-latin-400-normal.woff2",
      ),
      join(scratch, "Anton.woff2"),
    );
    const project = join(ROOT, "gallery", "title-card");
    const still = async (name: string, fonts: Record<string, string> | undefined) => {
      const args = ["still", project, "-o", join(scratch, `${name}.png`), "--time", "2"];
      if (fonts) {
        const brand = join(scratch, `${name}.json`);
        await writeFile(brand, JSON.stringify({ format: "svc-brand-kit/1", fonts }));
        args.push("--brand", brand);
      }
      const result = await svc(args);
      expect(result.stderr).toBe("");
      return grey(join(scratch, `${name}.png`));
    };
    const plain = await still("font-default", undefined);
    const fallback = await still("font-missing", { heading: "No Such Family" });
    const file = await still("font-file", { heading: "Anton.woff2" });
    expect(meanDifference(file, plain)).toBeGreaterThan(2);
    expect(meanDifference(file, fallback)).toBeGreaterThan(2);
    // The same file embedded, as the app saves it, draws the same frame.
    const embedded = await readBrandFile(join(scratch, "font-file.json"));
    expect(embedded.fonts.heading).toMatch(/^data:font\/woff2;name=Anton\.woff2;base64,/);
    await writeFile(join(scratch, "embedded.json"), brandFileText(embedded));
    const again = join(scratch, "font-embedded.png");
    const args = ["still", project, "--brand", join(scratch, "embedded.json"), "-o", again];
    expect((await svc([...args, "--time", "2"])).code).toBe(0);
    expect(meanDifference(await grey(again), file)).toBe(0);
  });

  it("refuses a font file that is not a font, naming the file", async () => {
    await writeFile(join(scratch, "notes.txt"), "not a font");
    const brand = join(scratch, "bad-font.json");
    await writeFile(brand, JSON.stringify({ fonts: { heading: "missing.ttf" } }));
    const result = await svc(["still", join(ROOT, "gallery", "title-card"), "--brand", brand]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Cannot read the font");
    expect(result.stderr).toContain("missing.ttf");
  });

  it("names what is wrong in a brand file", async () => {
    const brand = join(scratch, "bad-brand.json");
    await writeFile(brand, JSON.stringify({ colors: { primary: "red" } }));
    const result = await svc(["still", join(ROOT, "gallery", "title-card"), "--brand", brand]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("colors.primary: a colour is written #rrggbb");
  });
});
