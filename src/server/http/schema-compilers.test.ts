import { describe, expect, it } from "vitest";
import { dataEnvelope, renderRecordSchema, type RenderRecord } from "../../shared/api";
import { compileAnswerSerializer } from "./schema-compilers";

const queued: RenderRecord = {
  render_id: "rnd_0123456789abcdefghijklmn",
  status: "queued",
  progress: 0,
  title: "bench",
  fps: 30,
  quality: "standard",
  format: "mp4",
  resolution: "1080p",
  aspect_ratio: "16:9",
  composition: "index.html",
  duration: null,
  credits_charged: 0,
  created_at: 1795864277,
  started_at: null,
  completed_at: null,
  video_url: null,
  thumbnail_url: null,
  failure_code: null,
  failure_message: null,
  callback_id: null,
  warnings: [],
  asset_id: "ast_0123456789abcdefghijklmn",
  variables: {},
  strict_variables: false,
  outputs: [
    {
      index: 0,
      kind: "video",
      format: "mp4",
      resolution: "1080p",
      aspect_ratio: "16:9",
      width: 1920,
      height: 1080,
      time: null,
      status: "queued",
      url: null,
      thumbnail_url: null,
      bytes: null,
      credits_charged: 0,
    },
  ],
  libraries: [],
};

const completed: RenderRecord = {
  ...queued,
  status: "completed",
  progress: 1,
  title: 'quotes " and \\ and \u2028 and é',
  duration: 12.5,
  credits_charged: 1.25,
  started_at: 1795864280,
  completed_at: 1795864300,
  video_url: "https://store.example/v.mp4?sig=abc&exp=1",
  thumbnail_url: "https://store.example/t.jpg?sig=def",
  warnings: [
    { code: "undeclared_variable", message: "size is not declared", param: "variables.size" },
  ],
  variables: { size: 3, nested: { list: [1, "two", null], flag: true }, text: "<b>" },
  strict_variables: true,
  outputs: [
    {
      ...queued.outputs[0]!,
      status: "completed",
      url: "https://x/1",
      bytes: 123456,
      credits_charged: 1,
    },
    {
      ...queued.outputs[0]!,
      index: 1,
      kind: "still",
      format: "png",
      time: 2.5,
      status: "completed",
    },
  ],
  libraries: [
    {
      package: "gsap",
      requested: "3",
      version: "3.12.5",
      integrity: "sha512-abc",
      path: "dist/gsap.min.js",
    },
  ],
};

describe("the generated answer serialiser", () => {
  const schema = dataEnvelope(renderRecordSchema);
  const fast = compileAnswerSerializer(schema);

  it.each([
    ["a queued render", queued],
    ["a completed render with outputs, variables, warnings and libraries", completed],
    ["a failed render", { ...queued, status: "failed", failure_code: "x", failure_message: "y" }],
  ])("writes %s exactly as zod does", (_name, record) => {
    const answer = { data: record };
    expect(fast(answer)).toBe(JSON.stringify(schema.parse(answer)));
  });

  it("drops fields the schema does not declare, as zod's parse does", () => {
    const answer = { data: { ...queued, project_json: "{}", user_id: "user_secret" }, extra: 1 };
    const text = fast(answer);
    expect(text).not.toContain("user_secret");
    expect(text).toBe(JSON.stringify(schema.parse(answer)));
  });
});
