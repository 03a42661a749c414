// The frame adapters (runtime/adapters.ts) with the libraries the pages load from CDNs, answered
// by svc from the npm registry (node/library-cache.ts) with the network off, as the service
// renders: one small page per adapter (the feature corpus's, bench/compat/features/adapter-*),
// 2 s at 10 fps. Each renders, moves, renders again to the same frames with the registry
// unreachable (the cache answers), and a chunk that starts mid-way shows the whole render's
// frames. A library version that is not on npm is named in the render's warning.
import { execFile } from "node:child_process";
import { createServer } from "node:net";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configureLibraryCache, defaultLibraryCacheRoot } from "../node/library-cache";
import { npmConfig } from "../node/npm-config";
import { resolveFfmpeg } from "./ffmpeg/ffmpeg";
import { renderComposition } from "./render";
import { compareLateChunk } from "./testing/chunk-compare";
import { frameHashes } from "./testing/probe";

const execFileAsync = promisify(execFile);
const FEATURES = resolve(import.meta.dirname, "../../bench/compat/features");
const FPS = 10;
let scratch: string;
let cacheRoot: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "svc-frame-adapters-"));
  cacheRoot = join(scratch, "npm-cache");
});

afterAll(async () => {
  // The next test file in this worker gets the default cache back.
  configureLibraryCache({ root: defaultLibraryCacheRoot() });
  await rm(scratch, { recursive: true, force: true });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** A copy of a feature page, with the test clip it plays made by FFmpeg. */
async function project(name: string, withClip: boolean): Promise<string> {
  const dir = join(scratch, name);
  await cp(join(FEATURES, name), dir, { recursive: true });
  if (withClip) {
    await mkdir(join(dir, "media"), { recursive: true });
    const ffmpeg = await resolveFfmpeg();
    await execFileAsync(ffmpeg.path, [
      ...["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x180:r=25:d=3"],
      ...["-c:v", "libx264", "-pix_fmt", "yuv420p", join(dir, "media", "clip.mp4")],
    ]);
  }
  return dir;
}

const ADAPTERS: { name: string; packages: string[]; clip?: boolean }[] = [
  { name: "adapter-animejs", packages: ["animejs"] },
  { name: "adapter-d3", packages: ["d3"] },
  { name: "adapter-lottie", packages: ["lottie-web"] },
  { name: "adapter-three", packages: ["three"] },
  { name: "adapter-typegpu", packages: ["tinyest", "typed-binary", "typegpu"] },
  { name: "adapter-video-texture", packages: [], clip: true },
];

describe("frame adapters", () => {
  it.each(ADAPTERS)(
    "$name renders the same frames twice, offline the second time, and in a chunk",
    async ({ name, packages, clip }) => {
      configureLibraryCache({ root: cacheRoot });
      const dir = await project(name, clip === true);
      const options = { projectDir: dir, fps: FPS, quality: "draft" as const, allowNetwork: false };
      const first = await renderComposition({ ...options, output: join(dir, "first.mp4") });
      expect(first.warnings).toEqual([]);
      expect(first.frames).toBe(2 * FPS);
      expect([...new Set((first.libraries ?? []).map((library) => library.packageName))]).toEqual(
        packages,
      );
      const hashes = await frameHashes(first.outputPath);
      // The adapter moved the picture: the start and a late frame differ.
      expect(hashes[15]).not.toBe(hashes[0]);

      // The registry unreachable: the cache answers with the same files, pinned.
      configureLibraryCache({
        root: cacheRoot,
        config: { ...npmConfig(), registry: `http://127.0.0.1:${await closedPort()}/` },
      });
      const second = await renderComposition({ ...options, output: join(dir, "second.mp4") });
      expect(second.warnings).toEqual([]);
      expect(second.libraries).toEqual(first.libraries);
      expect(await frameHashes(second.outputPath)).toEqual(hashes);

      const late = await compareLateChunk(options, first.outputPath, first.frames, dir);
      expect(late.minSsim).toBeGreaterThanOrEqual(0.999);
    },
  );

  it("names a library version that is not on npm in the render's warning", async () => {
    configureLibraryCache({ root: cacheRoot });
    const dir = join(scratch, "not-on-npm");
    await mkdir(dir, { recursive: true });
    await writeFile(
      join(dir, "index.html"),
      `<!doctype html><html><body style="margin:0">
<div id="root" data-composition-id="main" data-width="320" data-height="180" data-duration="1"
 style="width:320px;height:180px;background:#123"></div>
<script src="https://cdn.jsdelivr.net/npm/animejs@99.1.0/lib/anime.min.js"></script>
</body></html>`,
    );
    const result = await renderComposition({
      projectDir: dir,
      output: join(dir, "out.mp4"),
      fps: 2,
      quality: "draft",
      allowNetwork: false,
    });
    expect(result.warnings.join("\n")).toContain("animejs 99.1.0 is not on npm");
  });
});
