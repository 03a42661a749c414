// The order vitest starts the unit test files in: the longest first, so the two workers end
// together. Vitest orders by the durations of the previous run, kept under node_modules/.vite;
// a fresh CI machine (`npm ci`) has none, and vitest then starts the largest files first and
// each project after the other, which left src/server/scale-out.test.ts (about two minutes, the
// longest) to start among the last and run alone on one worker at the end (issue 36: CI under
// 35 minutes). The files below, measured longest on CI (bench/README.md, "CI on a fresh
// machine"), start first in this order; the rest follow in vitest's own order.
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** `project:path` of the longest files, longest first. */
const LONGEST = [
  "scale-out:src/server/scale-out.test.ts",
  "default:src/engine/examples-render.test.ts",
  "default:src/engine/frame-adapters.test.ts",
  "default:src/engine/gallery.test.ts",
  "default:src/engine/dedup.test.ts",
  "default:src/engine/video-capture.test.ts",
  "default:src/engine/render.test.ts",
  "default:src/cli/cloud/faults.test.ts",
  "default:src/engine/chunk-jump.test.ts",
  "default:src/cli/cloud/cloud.test.ts",
  "default:src/server/outputs.test.ts",
  "default:src/server/fault-tolerance.test.ts",
  "scale-out:src/server/api.test.ts",
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = `${this.ctx.config.root}/`;
    const rank = (spec: TestSpecification) => {
      const index = LONGEST.indexOf(`${spec.project.name}:${spec.moduleId.replace(root, "")}`);
      return index === -1 ? LONGEST.length : index;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
