// The compat bench's unit tests (bench/compat.test.ts). The repository's vitest config only
// collects src/ and scripts/, so: npx vitest run -c bench/compat/vitest.config.ts
import { resolve } from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: resolve(import.meta.dirname, "../.."),
  test: { include: ["bench/compat.test.ts"] },
});
