// The lint keeps every folder's doors (eslint.config.js DOORS): a production file that imports
// past one fails `npm run lint`. Run on fixture text placed where such a file would live.
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const eslint = new ESLint({ cwd: process.cwd() });

async function doorErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? [])
    .filter((message) => message.ruleId === "@typescript-eslint/no-restricted-imports")
    .map((message) => message.message);
}

describe("the lint's doors", () => {
  it("refuses an engine module reached past the engine's door from the server", async () => {
    const errors = await doorErrors(
      "src/server/render/door-fixture.ts",
      'import { RUN_DEFAULTS } from "../../engine/stages/render-run";\nexport const d = RUN_DEFAULTS;\n',
    );
    expect(errors).toEqual([
      expect.stringContaining("src/engine/index.ts or src/engine/contract.ts"),
    ]);
  });

  it("refuses a server internal from the CLI, and a core internal from the desktop app", async () => {
    expect(
      await doorErrors(
        "src/cli/door-fixture.ts",
        'export { addCredits } from "../server/render/credits";\n',
      ),
    ).toHaveLength(1);
    expect(
      await doorErrors(
        "src/main/door-fixture.ts",
        'import { ApiClient } from "../core/api-client";\nexport const c = ApiClient;\n',
      ),
    ).toHaveLength(1);
  });

  it("lets the doors through, and a folder's own files reach each other", async () => {
    expect(
      await doorErrors(
        "src/server/render/door-fixture.ts",
        'import { isEngineError } from "../../engine/contract";\nimport { loadRender } from "./render-repository";\nexport const f = [isEngineError, loadRender];\n',
      ),
    ).toEqual([]);
  });
});
