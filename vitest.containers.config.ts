import { defineConfig } from "vitest/config";

// The container tests (`npm run test:containers`): the images built with podman and the
// Kubernetes manifests run by `podman kube play`. One file at a time: each keeps both cores busy
// (image builds, three worker pods rendering), and they share the images.
export const CONTAINER_TESTS = [
  "deploy/container/images.test.ts",
  "deploy/kubernetes/kube-play.test.ts",
];

export default defineConfig({
  test: {
    include: CONTAINER_TESTS,
    // The images, built once for both files.
    globalSetup: ["deploy/container/images-global-setup.ts"],
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 600_000,
    hookTimeout: 2_400_000,
  },
});
