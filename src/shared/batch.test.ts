import { describe, expect, it } from "vitest";
import {
  checkBatch,
  defaultOutputPattern,
  describeBlockedRows,
  fileNameFor,
  parseBatchTable,
  patternProblem,
  type BatchTable,
} from "./batch";
import { parseVariablesSchema } from "./variables";

const schema = parseVariablesSchema(
  JSON.stringify([
    { id: "title", type: "string", label: "Name", default: "Ada", maxLength: 20 },
    { id: "accent", type: "color", label: "Accent", default: "#ff3366" },
    { id: "size", type: "number", label: "Size", default: 64, min: 40, max: 96 },
    { id: "show_logo", type: "boolean", label: "Logo", default: true },
    { id: "style", type: "enum", label: "Style", default: "dark", options: ["dark", "light"] },
  ]),
).variables;

function table(text: string): BatchTable {
  const parsed = parseBatchTable(text);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.table;
}

const options = { strict: false, pattern: "{title}-{row}", format: "mp4" as const, project: "lt" };

describe("parseBatchTable", () => {
  it("reads CSV with quoted commas, quotes and line breaks in cells", () => {
    const parsed = table('title,subtitle\n"Hopper, Grace","She said ""hi"""\n"Two\nlines",x\n\n');
    expect(parsed.columns).toEqual(["title", "subtitle"]);
    expect(parsed.rows).toEqual([
      { row: 1, cells: { title: "Hopper, Grace", subtitle: 'She said "hi"' } },
      { row: 2, cells: { title: "Two\nlines", subtitle: "x" } },
    ]);
  });

  it("reads a table pasted from a spreadsheet (tabs) and leaves empty cells out", () => {
    expect(table("title\tsize\nAda\t\nAlan\t72\n").rows).toEqual([
      { row: 1, cells: { title: "Ada" } },
      { row: 2, cells: { title: "Alan", size: "72" } },
    ]);
  });

  it("reads a JSON array of objects, keeping its types", () => {
    const parsed = table('[{"title":"Ada","size":72},{"show_logo":false,"title":null}]');
    expect(parsed.columns).toEqual(["title", "size", "show_logo"]);
    expect(parsed.rows[1]).toEqual({ row: 2, cells: { show_logo: false } });
  });

  it("says what is wrong with a table it cannot read", () => {
    const problem = (text: string) => {
      const parsed = parseBatchTable(text);
      return parsed.ok ? "" : parsed.problem;
    };
    expect(problem("")).toBe("The table is empty.");
    expect(problem("title\n")).toBe("The table has a header but no rows.");
    expect(problem("title,title\na,b")).toBe('The header names column "title" twice.');
    expect(problem("title,\na,b")).toBe("Column 2 of the header line has no name.");
    expect(problem("title\na,b,c")).toBe("Row 1 has 3 cells but the header names 1 columns.");
    expect(problem('title\n"open')).toMatch(/unclosed quote/);
    expect(problem("[1]")).toBe("Row 1 of the JSON table is not an object.");
    expect(problem("[{")).toMatch(/^The table is not valid JSON/);
  });
});

describe("checkBatch", () => {
  it("turns cells into their variables' types and marks the bad ones by row", () => {
    const check = checkBatch(
      schema,
      table("title,size,show_logo,accent\nAda,72,no,#22aa44\nAlan,400,yes,red\nGrace,big,maybe,\n"),
      options,
    );
    expect(check.rows[0]).toMatchObject({
      row: 1,
      values: { title: "Ada", size: 72, show_logo: false, accent: "#22aa44" },
      issues: [],
      blocked: false,
      fileName: "Ada-1.mp4",
    });
    expect(check.rows[1]!.issues.map((i) => `${i.id}:${i.code}`)).toEqual([
      "size:out-of-range",
      "accent:type-mismatch",
    ]);
    expect(check.rows[2]!.issues.map((i) => `${i.id}:${i.code}`)).toEqual([
      "size:type-mismatch",
      "show_logo:type-mismatch",
    ]);
    expect(check.blockedRows).toEqual([2, 3]);
    expect(check.blocked).toBe(true);
    expect(describeBlockedRows(check)[0]).toBe(
      'row 2: size: 400 is above max 96 (out-of-range); accent: expected a hex color (#rgb, #rgba, #rrggbb or #rrggbbaa), got string "red" (type-mismatch)',
    );
  });

  it("names unknown columns, never sends them, and refuses them only when strict and unused by the pattern", () => {
    const rows = table("name,titel,title\nx,y,Ada\n");
    const loose = checkBatch(schema, rows, { ...options, pattern: "{name}-{row}" });
    expect(loose.unknownColumns).toEqual(["name", "titel"]);
    expect(loose.rows[0]!.values).toEqual({ title: "Ada" });
    expect(loose.blocked).toBe(false);
    expect(loose.rows[0]!.fileName).toBe("x-1.mp4");
    const strict = checkBatch(schema, rows, { ...options, strict: true, pattern: "{name}-{row}" });
    expect(strict.problems).toEqual([
      'Strict variables: "titel" is not a variable of this composition. Rename or remove the column, or turn strict variables off.',
    ]);
    expect(strict.blocked).toBe(true);
  });

  it("reads a captions column as each row's caption file, never a variable, even when strict", () => {
    const rows = table("title,captions\nAda,subs/ada.srt\nBo,\n");
    const check = checkBatch(schema, rows, { ...options, strict: true });
    expect(check.unknownColumns).toEqual([]);
    expect(check.problems).toEqual([]);
    expect(check.rows[0]).toMatchObject({ values: { title: "Ada" }, captions: "subs/ada.srt" });
    expect(check.rows[1]!.captions).toBeUndefined();
  });

  it("reads a caption_style column as each row's style (id or name), blocking a row that names none", () => {
    const rows = table(
      "title,captions,caption_style\nAda,a.srt,band\nBo,b.srt,Karaoke\nCy,,\nDi,d.srt,fancy\n",
    );
    const check = checkBatch(schema, rows, { ...options, strict: true });
    expect(check.unknownColumns).toEqual([]);
    expect(check.problems).toEqual([]);
    expect(check.rows.map((row) => row.captionStyle)).toEqual([
      "band",
      "karaoke",
      undefined,
      undefined,
    ]);
    expect(check.blockedRows).toEqual([4]);
    expect(check.rows[3]!.issues).toEqual([
      {
        id: "caption_style",
        code: "enum-out-of-range",
        message: '"fancy" is not a caption style: use Clean, Karaoke, Social, Band',
      },
    ]);
  });

  it("blocks rows that would write the same file", () => {
    const check = checkBatch(schema, table("title\nAda\nada\n"), {
      ...options,
      pattern: "{title}",
    });
    expect(check.rows[1]).toMatchObject({ fileName: "ada.mp4", duplicateOf: 1, blocked: true });
  });

  it("names a file from a default when the cell is empty", () => {
    const check = checkBatch(schema, table("title,size\n,50\n"), options);
    expect(check.rows[0]!.fileName).toBe("Ada-1.mp4");
  });
});

describe("file name patterns", () => {
  const name = (pattern: string, values: Record<string, unknown>, row = 3) =>
    fileNameFor(pattern, { row, project: "lower-third", values }, "mp4");

  it("fills placeholders and adds the format's extension", () => {
    expect(name("{title}-{row}", { title: "Grace Hopper" })).toBe("Grace Hopper-3.mp4");
    expect(name("{project}_{row}.mp4", {})).toBe("lower-third_3.mp4");
  });

  it("can never name anything outside the folder", () => {
    for (const evil of ["../../etc/passwd", "..\\..\\boot.ini", "/abs/path", "a/../../b", ".."]) {
      const file = name("{title}", { title: evil });
      expect(file).not.toMatch(/[/\\]/);
      expect(file.startsWith(".")).toBe(false);
    }
    expect(name("{title}", { title: "../../etc/passwd" })).toBe("etc-passwd.mp4");
    expect(name("{title}", { title: "" })).toBe("row-3.mp4");
    expect(name("{title}", { title: "CON" })).toBe("_CON.mp4");
    expect(name("{title}", { title: "a\u0000b\nc" })).toBe("a-b-c.mp4");
    expect(name("{title}", { title: "x".repeat(500) }).length).toBeLessThanOrEqual(84);
  });

  it("refuses patterns with folders, unknown columns, open braces or another format's extension", () => {
    expect(patternProblem("out/{row}", ["title"], "mp4")).toMatch(/names a file, not a folder/);
    expect(patternProblem("{nme}-{row}", ["title"], "mp4")).toMatch(
      /uses \{nme\}, which is not a column/,
    );
    expect(patternProblem("{row", ["title"], "mp4")).toMatch(/not closed/);
    expect(patternProblem("{row}.mp4", [], "webm")).toMatch(/ends in \.mp4 but the format is webm/);
    expect(patternProblem("{row}.webm", [], "webm")).toBeUndefined();
  });

  it("suggests the first text variable of the table", () => {
    expect(defaultOutputPattern(schema, ["size", "title"])).toBe("{title}-{row}");
    expect(defaultOutputPattern(schema, ["size"])).toBe("{project}-{row}");
  });
});
