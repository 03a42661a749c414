// End-to-end tests in e2e/. The browser comes from the engine's own resolver (see
// e2e/fixtures.ts), never from `npx playwright install`.
import { defineConfig } from "@playwright/test";

export default defineConfig({
  testDir: "e2e",
  timeout: 180_000,
  expect: { timeout: 15_000 },
  // Two files at a time on a 2-core machine (5 min instead of 8 for the suite); the tests of one
  // file run in order, each file starts its own services on free ports and temp dirs.
  workers: 2,
  forbidOnly: Boolean(process.env.CI),
  retries: 0,
  reporter: process.env.CI ? [["list"]] : [["list"]],
  outputDir: "test-results",
});
