import { configDefaults, defineConfig } from "vitest/config";
import { postgresUnavailable } from "./src/server/testing/postgres.js";
import { swiftMissing } from "./src/server/testing/s3-server.js";
import { CONTAINER_TESTS } from "./vitest.containers.config.js";
import LongestFirst from "./vitest.sequencer.js";

// Test files of the scale-out shape (PostgreSQL, pg-boss, S3), and the API suite that runs once
// more against it.
const SCALE_OUT_ONLY = [
  "src/server/storage/s3-store.test.ts",
  "src/server/s3-flow.test.ts",
  "src/server/queue/pgboss-queue.test.ts",
  "src/server/scale-out.test.ts",
  "src/server/chunked-audio.test.ts",
  "src/server/shared-limits.test.ts",
  "src/server/start-together.test.ts",
];
const API_SUITE = [
  "src/server/api.test.ts",
  "src/server/api-clients.test.ts",
  "src/server/render-flow.test.ts",
  "src/server/join-retry.test.ts",
  "src/server/cancel.test.ts",
  "src/server/outputs.test.ts",
  "src/server/speculative.test.ts",
  "src/server/failed-credentials.test.ts",
];
const inCi = !/^(|0|false|no|off)$/i.test((process.env.CI ?? "").trim());
const missing = [swiftMissing(), postgresUnavailable()].filter(Boolean).join("; ");
// CI never skips: there the project runs and a missing server fails with the apt line.
const withScaleOut = !missing || inCi;
if (!withScaleOut) console.warn(`The "scale-out" test project is skipped: ${missing}`);

export default defineConfig({
  test: {
    // Renders drive real Chromium + FFmpeg; two files at a time fit a 2-core machine.
    maxWorkers: 2,
    // The longest files first, also on a fresh machine with no durations of a previous run.
    sequence: { sequencer: LongestFirst },
    testTimeout: 120_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          name: "default",
          include: [
            "src/**/*.test.ts",
            "src/**/*.test.tsx",
            "scripts/**/*.test.ts",
            "bench/**/*.test.ts",
            "deploy/**/*.test.ts",
          ],
          // The container tests run on their own (vitest.containers.config.ts).
          exclude: [...configDefaults.exclude, ...SCALE_OUT_ONLY, ...CONTAINER_TESTS],
        },
      },
      ...(withScaleOut
        ? [
            {
              extends: true as const,
              test: {
                // One Swift and one PostgreSQL for the project's files; startService uses them.
                name: "scale-out",
                include: [...SCALE_OUT_ONLY, ...API_SUITE],
                globalSetup: ["src/server/testing/scale-out-global-setup.ts"],
                env: { SVC_TEST_STORAGE: "s3", SVC_TEST_DATABASE: "postgres" },
              },
            },
          ]
        : []),
    ],
  },
});
