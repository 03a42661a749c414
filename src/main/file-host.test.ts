// Opening a finished video with a real opener process (SVC_FILE_OPENER names a small script that
// writes down what it was asked to open), the no-opener error, the queue refusing to open anything
// outside a queued render's output folder, and image files chosen only inside the project.
import { chmod, mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClientError } from "../core/errors";
import { createSystemFileHost } from "./file-host";
import { writeJsonFileAtomic } from "../node/atomic-file";
import { RenderQueue } from "./render-queue";
import { listProjectImages, projectImageValue } from "./project-images";
import { tempDir, TINY_RENDER } from "./testing/support";
import { waitFor } from "../shared/testing/wait-for";

let base: string;

beforeAll(async () => {
  base = await tempDir("svc-file-host-");
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<ClientError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ClientError);
  return error as ClientError;
}

describe("opening a file", () => {
  it("starts the opener program with the file, detached", async () => {
    const marker = join(base, "opened.txt");
    const opener = join(base, "opener.sh");
    await writeFile(opener, `#!/bin/sh\nprintf '%s' "$1" > '${marker}'\n`);
    await chmod(opener, 0o755);
    const video = join(base, "video.mp4");
    await writeFile(video, "not really a video");
    await createSystemFileHost({ SVC_FILE_OPENER: opener }).openFile(video);
    const opened = await waitFor("the opener to run", () =>
      readFile(marker, "utf8").catch(() => undefined),
    );
    expect(opened).toBe(video);
  });

  it("answers no_opener with a hint when there is no program to open files with", async () => {
    const host = createSystemFileHost({ SVC_FILE_OPENER: join(base, "no-such-opener") });
    const error = await failure(host.openFile(join(base, "video.mp4")));
    expect(error.code).toBe("no_opener");
    expect(error.message).toContain("no-such-opener");
    expect(error.hint).toMatch(/SVC_FILE_OPENER/);
  });
});

describe("a queued render's output file", () => {
  it("is opened only while it exists inside the queued render's output folder", async () => {
    const downloads = join(base, "downloads");
    const elsewhere = join(base, "elsewhere");
    await mkdir(downloads, { recursive: true });
    await mkdir(elsewhere, { recursive: true });
    await writeFile(join(downloads, "ok.mp4"), "video");
    await writeFile(join(elsewhere, "secret.txt"), "not a render");
    await symlink(join(elsewhere, "secret.txt"), join(downloads, "link.mp4"));
    const queuedRender = (id: string, outputPath: string) => ({
      id,
      revision: 1,
      title: id,
      status: "completed",
      stage: "download",
      progress: 1,
      createdAt: 1,
      source: { type: "dir", dir: base, composition: "index.html" },
      settings: TINY_RENDER,
      renderId: `rndr_${id}`,
      outputPath,
      outputDir: downloads,
      idempotencyKey: `svc-desktop:${id}`,
      renderFailed: false,
    });
    const file = join(base, "queue.json");
    await writeJsonFileAtomic(file, {
      version: 2,
      queuedRenders: [
        queuedRender("inside", join(downloads, "ok.mp4")),
        queuedRender("outside", join(elsewhere, "secret.txt")),
        queuedRender("link", join(downloads, "link.mp4")),
        queuedRender("gone", join(downloads, "gone.mp4")),
      ],
    });
    const queue = await RenderQueue.open({
      file,
      // Never reached: nothing here talks to the service.
      service: {
        client: () => Promise.reject(new Error("unused")),
        waitUntilAvailable: () => Promise.resolve(),
      },
      concurrency: () => 1,
      downloadsDir: () => downloads,
    });
    expect(await queue.outputFile("inside")).toBe(join(downloads, "ok.mp4"));
    expect((await failure(queue.outputFile("outside"))).code).toBe("path_outside_output");
    expect((await failure(queue.outputFile("link"))).code).toBe("path_outside_output");
    expect((await failure(queue.outputFile("gone"))).code).toBe("file_missing");
    await queue.close();
  });
});

describe("image variables", () => {
  let project: string;
  beforeAll(async () => {
    project = join(base, "project");
    await mkdir(join(project, "images", "logos"), { recursive: true });
    await mkdir(join(base, "outside"), { recursive: true });
    await writeFile(join(project, "index.html"), "<html></html>");
    await writeFile(join(project, "images", "photo.PNG"), "png");
    await writeFile(join(project, "images", "notes.txt"), "text");
    await writeFile(join(project, "images", "logos", "mark.svg"), "<svg/>");
    await writeFile(join(base, "outside", "escape.png"), "png");
    await symlink(join(base, "outside", "escape.png"), join(project, "images", "link.png"));
    await symlink(join(base, "outside"), join(project, "linked-folder"));
  });

  it("lists the project's folders and only its image files, with project-relative values", async () => {
    const listing = await listProjectImages(project, join(project, "images"));
    expect(listing.folders.map((folder) => folder.name)).toEqual(["logos"]);
    // The symlink to a file outside is not offered (nor is the linked folder at the root).
    expect(listing.images.map((image) => image.path)).toEqual(["images/photo.PNG"]);
    const root = await listProjectImages(project, undefined);
    expect(root.folders.map((folder) => folder.name)).toEqual(["images"]);
    expect(listing.parent).toBe(listing.root);
  });

  it("refuses folders and files outside the project, through ../ or a symlink", async () => {
    expect((await failure(listProjectImages(project, join(project, "..")))).code).toBe(
      "path_outside_project",
    );
    expect((await failure(listProjectImages(project, join(project, "linked-folder")))).code).toBe(
      "path_outside_project",
    );
    expect((await failure(projectImageValue(project, "../outside/escape.png"))).code).toBe(
      "path_outside_project",
    );
    expect((await failure(projectImageValue(project, "images/link.png"))).code).toBe(
      "path_outside_project",
    );
    expect((await failure(projectImageValue(project, "images/notes.txt"))).code).toBe(
      "not_an_image",
    );
    expect(await projectImageValue(project, join(project, "images", "logos", "mark.svg"))).toBe(
      "images/logos/mark.svg",
    );
  });
});
