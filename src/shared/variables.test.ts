import { describe, expect, it } from "vitest";
import {
  blockingIssues,
  formatVariableIssue,
  parseVariablesSchema,
  resolveVariables,
  validateVariables,
  type VariableDefinition,
} from "./variables";

const schemaJson = JSON.stringify([
  { id: "title", type: "string", label: "Title", default: "Hello", maxLength: 10 },
  { id: "size", type: "number", label: "Size", default: 5, min: 1, max: 10, step: 1 },
  { id: "accent", type: "color", label: "Accent", default: "#ff0000" },
  { id: "show", type: "boolean", label: "Show", default: true },
  {
    id: "theme",
    type: "enum",
    label: "Theme",
    default: "dark",
    options: [
      { value: "dark", label: "Dark" },
      { value: "light", label: "Light" },
    ],
  },
  { id: "font", type: "font", label: "Font", default: "Inter", description: "Headline font" },
  { id: "logo", type: "image", label: "Logo", default: "assets/logo.png" },
]);

function schema(): VariableDefinition[] {
  const parsed = parseVariablesSchema(schemaJson);
  expect(parsed.errors).toEqual([]);
  return parsed.variables;
}

describe("parseVariablesSchema", () => {
  it("reads every variable type with its constraints", () => {
    const variables = schema();
    expect(variables.map((v) => [v.id, v.type])).toEqual([
      ["title", "string"],
      ["size", "number"],
      ["accent", "color"],
      ["show", "boolean"],
      ["theme", "enum"],
      ["font", "font"],
      ["logo", "image"],
    ]);
    expect(variables[0]).toEqual({
      id: "title",
      type: "string",
      label: "Title",
      default: "Hello",
      maxLength: 10,
    });
    expect(variables[1]).toMatchObject({ min: 1, max: 10, step: 1 });
    expect(variables[4]!.options).toEqual([
      { value: "dark", label: "Dark" },
      { value: "light", label: "Light" },
    ]);
    expect(variables[5]!.description).toBe("Headline font");
  });

  it("treats a missing or empty attribute as no variables", () => {
    expect(parseVariablesSchema(null)).toEqual({ variables: [], errors: [] });
    expect(parseVariablesSchema(undefined)).toEqual({ variables: [], errors: [] });
    expect(parseVariablesSchema("  ")).toEqual({ variables: [], errors: [] });
  });

  it("reports broken JSON and a non-array without throwing", () => {
    const broken = parseVariablesSchema("[{");
    expect(broken.variables).toEqual([]);
    expect(broken.errors[0]).toMatch(/not valid JSON/);
    expect(parseVariablesSchema('{"id":"x"}').errors[0]).toMatch(
      /must be a JSON array, got an object/,
    );
  });

  it("keeps the good entries and names each bad one", () => {
    const parsed = parseVariablesSchema(
      JSON.stringify([
        { id: "ok", type: "string", label: "OK", default: "x" },
        { id: "weird", type: "video", label: "Weird" },
        { type: "string", label: "No id" },
        { id: "pick", type: "enum", label: "Pick", options: [] },
        { id: "ok", type: "number", label: "Again", default: 1 },
        { id: "range", type: "number", label: "Range", min: 5, max: 1 },
        "not an object",
      ]),
    );
    expect(parsed.variables.map((v) => v.id)).toEqual(["ok"]);
    expect(parsed.errors).toHaveLength(6);
    expect(parsed.errors[0]).toMatch(/^variable 1 \("weird"\): type: type must be one of string/);
    expect(parsed.errors[1]).toMatch(/^variable 2: id/);
    expect(parsed.errors[2]).toMatch(/^variable 3 \("pick"\): an enum needs a non-empty "options"/);
    expect(parsed.errors[3]).toMatch(/^variable 4 \("ok"\): duplicate id "ok"/);
    expect(parsed.errors[4]).toMatch(/min 5 is greater than max 1/);
    expect(parsed.errors[5]).toMatch(/^variable 6/);
  });

  it("keeps a variable whose default breaks its own rules, and says so", () => {
    const parsed = parseVariablesSchema(
      JSON.stringify([{ id: "size", type: "number", label: "Size", default: 50, max: 10 }]),
    );
    expect(parsed.variables).toHaveLength(1);
    expect(parsed.errors).toEqual([
      'variable 0 ("size"): default 50 is above max 10 (out-of-range)',
    ]);
  });

  it("accepts options written as plain strings and a missing label", () => {
    const parsed = parseVariablesSchema(
      JSON.stringify([{ id: "mode", type: "enum", default: "a", options: ["a", "b"] }]),
    );
    expect(parsed.errors).toEqual([]);
    expect(parsed.variables[0]).toMatchObject({
      label: "mode",
      options: [
        { value: "a", label: "a" },
        { value: "b", label: "b" },
      ],
    });
  });
});

describe("validateVariables", () => {
  it("accepts values that fit the schema", () => {
    expect(
      validateVariables(schema(), {
        title: "Short",
        size: 10,
        accent: "#0a0B0c",
        show: false,
        theme: "light",
        font: "Roboto",
        logo: "https://example.com/logo.png",
      }),
    ).toEqual([]);
  });

  it("flags undeclared keys", () => {
    expect(validateVariables(schema(), { subtitle: "x" })).toEqual([
      { id: "subtitle", code: "undeclared", message: "is not declared by the composition" },
    ]);
  });

  it("flags wrong types with what was expected and what came", () => {
    const issues = validateVariables(schema(), {
      title: 5,
      size: "5",
      show: "yes",
      font: 12,
      logo: null,
      theme: 1,
    });
    expect(issues.map((i) => [i.id, i.code])).toEqual([
      ["title", "type-mismatch"],
      ["size", "type-mismatch"],
      ["show", "type-mismatch"],
      ["font", "type-mismatch"],
      ["logo", "type-mismatch"],
      ["theme", "type-mismatch"],
    ]);
    expect(formatVariableIssue(issues[0]!)).toBe(
      "title: expected a string, got number 5 (type-mismatch)",
    );
  });

  it("accepts only hex colors", () => {
    for (const good of ["#abc", "#abcd", "#aabbcc", "#AABBCCDD"]) {
      expect(validateVariables(schema(), { accent: good }), good).toEqual([]);
    }
    for (const bad of ["red", "#ab", "#abcde", "rgb(0,0,0)", "aabbcc", "#gggggg", 0xff0000]) {
      expect(validateVariables(schema(), { accent: bad })[0]?.code, String(bad)).toBe(
        "type-mismatch",
      );
    }
  });

  it("checks number bounds and finiteness", () => {
    expect(validateVariables(schema(), { size: 0 })[0]).toMatchObject({
      code: "out-of-range",
      message: "0 is below min 1",
    });
    expect(validateVariables(schema(), { size: 11 })[0]).toMatchObject({
      code: "out-of-range",
      message: "11 is above max 10",
    });
    expect(validateVariables(schema(), { size: Number.NaN })[0]?.code).toBe("type-mismatch");
    expect(validateVariables(schema(), { size: Infinity })[0]?.code).toBe("type-mismatch");
  });

  it("checks string length and enum membership", () => {
    expect(validateVariables(schema(), { title: "far too long a title" })[0]).toMatchObject({
      code: "out-of-range",
    });
    const [issue] = validateVariables(schema(), { theme: "neon" });
    expect(issue).toMatchObject({ id: "theme", code: "enum-out-of-range" });
    expect(formatVariableIssue(issue!)).toBe(
      'theme: "neon" is not one of "dark", "light" (enum-out-of-range)',
    );
  });
});

describe("resolveVariables", () => {
  it("merges defaults with values, values winning and undeclared keys kept", () => {
    expect(resolveVariables(schema(), { title: "Hi", show: false, extra: 1 })).toEqual({
      title: "Hi",
      size: 5,
      accent: "#ff0000",
      show: false,
      theme: "dark",
      font: "Inter",
      logo: "assets/logo.png",
      extra: 1,
    });
  });

  it("leaves out variables without a default that got no value", () => {
    const variables = parseVariablesSchema(
      JSON.stringify([{ id: "name", type: "string", label: "Name" }]),
    ).variables;
    expect(resolveVariables(variables, {})).toEqual({});
    expect(resolveVariables(variables, { name: "Ada" })).toEqual({ name: "Ada" });
  });
});

describe("blockingIssues", () => {
  const schema = parseVariablesSchema(
    JSON.stringify([{ id: "size", type: "number", label: "Size", default: 1, min: 0, max: 5 }]),
  ).variables;

  it("stops a render on a wrong type or range always, on an undeclared key only when strict", () => {
    const issues = validateVariables(schema, { size: 9, extra: 1 });
    expect(blockingIssues(issues, false).map((issue) => issue.code)).toEqual(["out-of-range"]);
    expect(
      blockingIssues(issues, true)
        .map((issue) => issue.code)
        .sort(),
    ).toEqual(["out-of-range", "undeclared"]);
    expect(blockingIssues(validateVariables(schema, { extra: 1 }), false)).toEqual([]);
  });
});
