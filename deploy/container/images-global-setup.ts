// Vitest global setup of the container tests (vitest.containers.config.ts): the images are built
// once, before both files, which read how long it took through `inject`. Each file building them
// itself cost the second one a cached rebuild (about a minute at load 20-35: the build context
// hashed, each step looked up, npm asked for the stand-in base's versions). A file run under
// another config (nothing provided) builds them itself. Under `npm test` they were built in the
// background meanwhile the other tests ran (scripts/test.mjs, deploy/container/build-images.ts):
// SVC_CONTAINER_IMAGES_BUILT names the file saying how long that took, and nothing is built again.
import { readFile } from "node:fs/promises";
import type { TestProject } from "vitest/node";
import { buildAllImages, podmanUnavailable } from "./podman";

declare module "vitest" {
  export interface ProvidedContext {
    /** Seconds the images took (per image, and in all), when this setup built them. */
    containerImages: { seconds: Record<string, number>; total: number; load: string } | null;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  // Without podman the files skip (or, in CI, fail saying what is missing): nothing to build.
  if (podmanUnavailable()) {
    project.provide("containerImages", null);
    return;
  }
  const prebuilt = process.env.SVC_CONTAINER_IMAGES_BUILT;
  if (prebuilt) {
    const built = JSON.parse(await readFile(prebuilt, "utf8")) as {
      seconds: Record<string, number>;
      total: number;
      load: string;
    };
    project.provide("containerImages", { ...built, load: `${built.load}, in the background` });
    return;
  }
  const started = Date.now();
  const seconds = await buildAllImages();
  const load = (await readFile("/proc/loadavg", "utf8")).split(" ").slice(0, 3).join(" ");
  project.provide("containerImages", {
    seconds,
    total: Math.round((Date.now() - started) / 1000),
    load,
  });
}
