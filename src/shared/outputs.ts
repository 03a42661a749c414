// Several outputs from one render (issue 25, docs/OUTPUTS-CONTRACT in the notes; README "Several
// outputs"): the request's `outputs` list, the rules each entry follows, the plan every part of svc
// reads it as (service, quote, CLI `--also`, the app), and an output's wire record. Without
// `outputs` a render has exactly one output: the request's top-level settings.
// An entry is a video (any of FORMATS, rendered at its own resolution and aspect ratio: the page is
// laid out at that viewport, docs/composition-format.md) or a still (one frame at `still.time`).
// Omitted fields take the top-level body's values. The first output must be a video: the record's
// format, resolution, aspect_ratio and video_url describe it, as they always did.
import { z } from "zod";
import {
  ASPECT_RATIOS,
  FILE_EXTENSIONS,
  FORMATS,
  RESOLUTIONS,
  renderSettingsRule,
  type AspectRatio,
  type OutputFormat,
  type Resolution,
} from "./render-options";

export const STILL_FORMATS = ["png", "jpeg", "webp"] as const;
export type StillFormat = (typeof STILL_FORMATS)[number];
export const STILL_FILE_EXTENSIONS: Record<StillFormat, string> = {
  png: "png",
  jpeg: "jpg",
  webp: "webp",
};
export const STILL_CONTENT_TYPES: Record<StillFormat, string> = {
  png: "image/png",
  jpeg: "image/jpeg",
  webp: "image/webp",
};

/** Most outputs one render may have (each is rendered separately: the cap bounds one request's work). */
export const MAX_OUTPUTS = 8;

export const OUTPUT_KINDS = ["video", "still"] as const;
export type OutputKind = (typeof OUTPUT_KINDS)[number];
export const OUTPUT_FILE_FORMATS = [...FORMATS, ...STILL_FORMATS] as const;
export type OutputFileFormat = (typeof OUTPUT_FILE_FORMATS)[number];
export const OUTPUT_STATUSES = ["queued", "rendering", "completed", "failed"] as const;
export type OutputStatus = (typeof OUTPUT_STATUSES)[number];

export const stillSpecSchema = z.object({
  time: z
    .number({ error: "still.time must be a number of seconds, e.g. 2.5" })
    .min(0, { error: "still.time must be at least 0 seconds" }),
  format: z.enum(STILL_FORMATS).default("png"),
});

export const outputSpecSchema = z.object({
  format: z.enum(FORMATS).optional(),
  resolution: z.enum(RESOLUTIONS).optional(),
  aspect_ratio: z.enum(ASPECT_RATIOS).optional(),
  still: stillSpecSchema.optional(),
});
export type OutputSpec = z.input<typeof outputSpecSchema>;

/** Spread into a request schema next to renderOptionsShape (render and quote requests). */
export const outputsShape = {
  /** When present, the complete list of the render's files (1 to MAX_OUTPUTS). */
  outputs: z
    .array(outputSpecSchema)
    .min(1, { error: "outputs must list at least one output, or be left out" })
    .max(MAX_OUTPUTS, { error: `outputs may list at most ${MAX_OUTPUTS} outputs` })
    .optional(),
};

/** One output as svc plans it: every field settled except an aspect ratio left to detection. */
export interface PlannedOutput {
  index: number;
  kind: OutputKind;
  /** mp4|webm|mov|gif|png-sequence for a video, png|jpeg|webp for a still. */
  format: OutputFileFormat;
  resolution: Resolution;
  /** Undefined: the top-level aspect_ratio, itself detected from the composition when absent. */
  aspect_ratio: AspectRatio | undefined;
  /** A still's time in seconds; null for a video. */
  time: number | null;
}

interface TopLevel {
  format: OutputFormat;
  resolution: Resolution;
  aspect_ratio?: AspectRatio | undefined;
  outputs?: OutputSpec[] | undefined;
}

/** The render's outputs: the `outputs` list with the top-level values filled in, else the top level. */
export function planOutputs(body: TopLevel): PlannedOutput[] {
  const specs = body.outputs ?? [{}];
  return specs.map((spec, index) => ({
    index,
    kind: spec.still ? "still" : "video",
    format: spec.still ? (spec.still.format ?? "png") : (spec.format ?? body.format),
    resolution: spec.resolution ?? body.resolution,
    aspect_ratio: spec.aspect_ratio ?? body.aspect_ratio,
    time: spec.still ? spec.still.time : null,
  }));
}

/**
 * The rules of each entry, added to a request schema with `.superRefine(outputsRule)`: a still takes
 * its format in `still.format`, is 1080p, and cannot come first; a video follows the render
 * settings' rules (4k is mp4 only, a gif at most 50 fps) with the top-level fps. Each problem names
 * its field, e.g. `outputs[2].still.time` (http/request.ts writes the path that way).
 */
export function outputsRule(body: TopLevel & { fps?: number }, ctx: z.RefinementCtx): void {
  body.outputs?.forEach((spec, index) => {
    const at = (path: PropertyKey[], message: string) =>
      ctx.addIssue({ code: "custom", path: ["outputs", index, ...path], message });
    if (spec.still) {
      if (index === 0) {
        at(
          ["still"],
          "the first output must be a video (the record's format and video_url describe it); put stills after it",
        );
      }
      if (spec.format !== undefined) {
        at(["format"], "a still's format goes in still.format (png, jpeg or webp)");
      }
      if ((spec.resolution ?? body.resolution) === "4k") {
        at(["resolution"], "a still is rendered at 1080p; leave resolution out or use 1080p");
      }
      return;
    }
    const settings = {
      format: spec.format ?? body.format,
      resolution: spec.resolution ?? body.resolution,
      ...(body.fps !== undefined ? { fps: body.fps } : {}),
    };
    renderSettingsRule(settings, {
      ...ctx,
      addIssue: (issue: { path?: PropertyKey[]; message?: string }) =>
        at(issue.path ?? [], issue.message ?? "invalid output"),
    } as z.RefinementCtx);
  });
}

/** Frames an output draws: a video's every frame, a still's one. */
export function outputFrames(output: { kind: OutputKind }, videoFrames: number): number {
  return output.kind === "still" ? 1 : videoFrames;
}

/** An output in a render's record (and in its webhooks). */
export const renderOutputSchema = z.object({
  /** Position in the request's outputs list (0-based). */
  index: z.number().int(),
  kind: z.enum(OUTPUT_KINDS),
  format: z.enum(OUTPUT_FILE_FORMATS),
  resolution: z.enum(RESOLUTIONS),
  aspect_ratio: z.enum(ASPECT_RATIOS),
  /** Pixels of the file. */
  width: z.number().int(),
  height: z.number().int(),
  /** A still's time in seconds; null for a video. */
  time: z.number().nullable(),
  status: z.enum(OUTPUT_STATUSES),
  /** Signed, short-lived, like video_url; null until the output is completed. */
  url: z.string().nullable(),
  thumbnail_url: z.string().nullable(),
  bytes: z.number().int().nullable(),
  /** This output's charge line; the render's credits_charged is their sum. */
  credits_charged: z.number(),
});
export type RenderOutput = z.infer<typeof renderOutputSchema>;

// ---------------------------------------------------------------- `--also` (CLI) and file names

/**
 * The outputs a `--also` list adds after the main one: `9:16` (the main format at that aspect
 * ratio), `gif` (that format at the main aspect ratio), `still@2.5` or `still@2.5:jpeg` (a still
 * at 2.5 s). Throws an Error naming the token it cannot read.
 */
export function parseAlso(list: string): OutputSpec[] {
  const tokens = list
    .split(",")
    .map((token) => token.trim())
    .filter(Boolean);
  if (tokens.length === 0) {
    throw new Error("the list is empty; e.g. 9:16,1:1,gif,still@2.5");
  }
  return tokens.map((token) => {
    if ((ASPECT_RATIOS as readonly string[]).includes(token)) {
      return { aspect_ratio: token as AspectRatio };
    }
    if ((FORMATS as readonly string[]).includes(token)) return { format: token as OutputFormat };
    const still = /^still@([^:]+)(?::(.+))?$/.exec(token);
    if (still) {
      const time = Number(still[1]);
      if (!/^\d+(\.\d+)?$/.test(still[1]!) || !Number.isFinite(time)) {
        throw new Error(`"${token}": the still's time must be seconds, e.g. still@2.5`);
      }
      const format = still[2] ?? "png";
      if (!(STILL_FORMATS as readonly string[]).includes(format)) {
        throw new Error(`"${token}": a still is png, jpeg or webp, e.g. still@2.5:jpeg`);
      }
      return { still: { time, format: format as StillFormat } };
    }
    throw new Error(
      `"${token}" is not an aspect ratio (${ASPECT_RATIOS.join(", ")}), a format (${FORMATS.join(", ")}) or still@SECONDS[:png|jpeg|webp]`,
    );
  });
}

const outputsCheckSchema = z
  .object({
    fps: z.number(),
    format: z.enum(FORMATS),
    resolution: z.enum(RESOLUTIONS),
    outputs: outputsShape.outputs,
  })
  .superRefine(outputsRule);

/**
 * The first problem of an outputs list with these top-level settings, as the service would say it
 * (`outputs[1].format`, message), or undefined. Lets a client refuse before uploading.
 */
export function checkOutputs(settings: {
  fps: number;
  format: OutputFormat;
  resolution: Resolution;
  outputs: OutputSpec[];
}): { index: number; message: string } | undefined {
  const result = outputsCheckSchema.safeParse(settings);
  if (result.success) return undefined;
  const issue = result.error.issues[0]!;
  const index = typeof issue.path[1] === "number" ? issue.path[1] : 0;
  return { index, message: issue.message };
}

/** An output file's extension: a still's (png, jpg, webp) or a video format's. */
export function outputExtension(output: { kind: OutputKind; format: OutputFileFormat }): string {
  return output.kind === "still"
    ? STILL_FILE_EXTENSIONS[output.format as StillFormat]
    : FILE_EXTENSIONS[output.format as OutputFormat];
}

/**
 * Where an extra output goes, next to the main file: `out.mp4` -> `out-9x16.mp4`, `out.gif`,
 * `out-2.5s.png`, `out-1x1-2.5s.jpg` (its aspect ratio when it differs from the main one's, its
 * resolution when it differs, a still's time, then its own extension). A name already taken by an
 * earlier file gets the output's index (`out-2.mp4`).
 */
export function extraOutputPath(
  mainPath: string,
  main: { aspect_ratio: AspectRatio; resolution: Resolution },
  output: {
    index: number;
    kind: OutputKind;
    format: OutputFileFormat;
    aspect_ratio: AspectRatio;
    resolution: Resolution;
    time: number | null;
  },
  taken: readonly string[] = [],
): string {
  const stem = mainPath.replace(/\.[^./\\]*$/, "");
  const parts = [
    ...(output.aspect_ratio !== main.aspect_ratio ? [output.aspect_ratio.replace(":", "x")] : []),
    ...(output.resolution !== main.resolution ? [output.resolution] : []),
    ...(output.time !== null ? [`${output.time}s`] : []),
  ];
  const extension = outputExtension(output);
  const name = `${stem}${parts.map((part) => `-${part}`).join("")}.${extension}`;
  const all = [mainPath, ...taken];
  return all.includes(name)
    ? `${stem}${parts.map((p) => `-${p}`).join("")}-${output.index}.${extension}`
    : name;
}
