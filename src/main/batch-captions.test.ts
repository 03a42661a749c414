// Each batch row's captions as the main process settles them (issue 37): a file chosen in the grid
// beats the table's cell, a cell names a file inside the project (read and checked here, refused
// by row and line, named without its folder), an empty one takes the project's captions, and the
// row's look beats the batch's.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BatchRowCheck } from "../shared/batch";
import { batchRowCaptions } from "./batch-captions";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "svc-batch-captions-"));
  await mkdir(join(root, "subs"));
  await writeFile(
    join(root, "subs", "ada.srt"),
    "1\n00:00:00,000 --> 00:00:01,000\nFrom the file\n",
  );
  await writeFile(join(root, "subs", "bad.srt"), "1\n00:00:00,000 --> nope\nX\n");
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const row = (n: number, extra: Partial<BatchRowCheck> = {}): BatchRowCheck => ({
  row: n,
  values: {},
  issues: [],
  fileName: `${n}.mp4`,
  duplicateOf: undefined,
  blocked: false,
  ...extra,
});
const shared = {
  cues: [{ start: 0, end: 1, text: "Project words" }],
  style: "karaoke" as const,
  burn_in: true,
  soft_track: false,
};

describe("batchRowCaptions", () => {
  it("takes the chosen file, else the project file the cell names, else the project's captions", async () => {
    const chosen = new Map([[1, [{ start: 0, end: 2, text: "Chosen words" }]]]);
    const result = await batchRowCaptions(
      root,
      [
        row(1, { captions: "subs/ada.srt" }),
        row(2, { captions: "subs/ada.srt", captionStyle: "band" }),
        row(3),
      ],
      chosen,
      shared,
    );
    expect(result.map((captions) => captions?.cues?.[0]?.text)).toEqual([
      "Chosen words",
      "From the file",
      "Project words",
    ]);
    expect(result.map((captions) => captions?.style)).toEqual(["karaoke", "band", "karaoke"]);
    const none = await batchRowCaptions(root, [row(1)], new Map(), undefined);
    expect(none).toEqual([undefined]);
  });

  it("refuses a missing, outside or broken file by row and line, naming the file without its folder", async () => {
    const refusal = (captions: string) =>
      batchRowCaptions(root, [row(4, { captions })], new Map(), undefined).then(
        () => undefined,
        (error: Error) => error.message,
      );
    expect(await refusal("subs/none.srt")).toBe(
      "Row 4: there is no caption file none.srt in the project.",
    );
    expect(await refusal("../../etc/passwd")).toBe(
      "Row 4: there is no caption file passwd in the project.",
    );
    expect(await refusal("subs/bad.srt")).toMatch(/^Row 4: bad\.srt: Line 2: /);
  });
});
