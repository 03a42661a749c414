import { configDefaults, defineConfig } from "vitest/config";
import { swiftMissing } from "./src/server/testing/s3-server.js";

// Test files that need the S3-compatible store, and the API suite that runs once more against it.
const S3_ONLY = ["src/server/storage/s3-store.test.ts", "src/server/s3-flow.test.ts"];
const API_SUITE = ["src/server/api.test.ts", "src/server/api-clients.test.ts"];
const inCi = !/^(|0|false|no|off)$/i.test((process.env.CI ?? "").trim());
const missing = swiftMissing();
// CI never skips: there the project runs and a missing Swift fails with the apt line.
const withS3 = !missing || inCi;
if (!withS3) console.warn(`The "s3" test project is skipped: ${missing}`);

export default defineConfig({
  test: {
    // Renders drive real Chromium + FFmpeg; two files at a time fit a 2-core machine.
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          name: "default",
          include: ["src/**/*.test.ts", "src/**/*.test.tsx", "scripts/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...S3_ONLY],
        },
      },
      ...(withS3
        ? [
            {
              extends: true as const,
              test: {
                // One Swift for the project's files; startService stores in it (SVC_TEST_STORAGE).
                name: "s3",
                include: [...S3_ONLY, ...API_SUITE],
                globalSetup: ["src/server/testing/s3-global-setup.ts"],
                env: { SVC_TEST_STORAGE: "s3" },
              },
            },
          ]
        : []),
    ],
  },
});
