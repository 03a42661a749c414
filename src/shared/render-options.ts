// Render settings (fps, quality, format, resolution, aspect ratio): one declaration of the fields,
// their defaults and the cross-field rule ("4k cannot be webm or mov"), which the API's request
// (snake_case), the desktop IPC and UI (camelCase), the CLI and the engine derive from, and the one
// mapping between the two casings. Besides the video formats there are two made from the same
// frames: `gif` (a palette made for the render) and `png-sequence` (a zip of numbered PNGs).
import { z } from "zod";
import { DEFAULT_FPS, FPS_MAX, FPS_MIN, GIF_MAX_FPS } from "./limits";

export const FORMATS = ["mp4", "webm", "mov", "gif", "png-sequence"] as const;
export const QUALITIES = ["draft", "standard", "high"] as const;
export const RESOLUTIONS = ["1080p", "4k"] as const;
export const ASPECT_RATIOS = ["16:9", "9:16", "1:1"] as const;

export type OutputFormat = (typeof FORMATS)[number];
export type Quality = (typeof QUALITIES)[number];
export type Resolution = (typeof RESOLUTIONS)[number];
export type AspectRatio = (typeof ASPECT_RATIOS)[number];

/** Formats that carry an alpha channel (captured with a transparent page background). */
export const ALPHA_FORMATS: readonly OutputFormat[] = ["webm", "mov", "png-sequence"];

/** Formats that are pictures rather than a video file: no audio track, no 4k. */
export const PICTURE_FORMATS: readonly OutputFormat[] = ["gif", "png-sequence"];

export const FILE_EXTENSIONS: Record<OutputFormat, string> = {
  mp4: "mp4",
  webm: "webm",
  mov: "mov",
  gif: "gif",
  "png-sequence": "zip",
};

/** Output frame size in pixels for an aspect ratio and resolution. */
export function outputSize(
  aspectRatio: AspectRatio,
  resolution: Resolution,
): { width: number; height: number } {
  const base = { "16:9": [1920, 1080], "9:16": [1080, 1920], "1:1": [1080, 1080] }[aspectRatio];
  const scale = resolution === "4k" ? 2 : 1;
  return { width: base[0]! * scale, height: base[1]! * scale };
}

export const fpsSchema = z
  .number({ error: `fps must be a whole number from ${FPS_MIN} to ${FPS_MAX}` })
  .int({ error: `fps must be a whole number from ${FPS_MIN} to ${FPS_MAX}` })
  .min(FPS_MIN, { error: `fps must be at least ${FPS_MIN}` })
  .max(FPS_MAX, { error: `fps must be at most ${FPS_MAX}` });

/** The settings a render starts from when nothing is chosen (the aspect ratio is detected). */
export const DEFAULT_RENDER_SETTINGS = {
  fps: DEFAULT_FPS,
  quality: "standard",
  format: "mp4",
  resolution: "1080p",
} as const satisfies {
  fps: number;
  quality: Quality;
  format: OutputFormat;
  resolution: Resolution;
};

/** The fields with their defaults, camelCase (IPC, UI, CLI, engine). Spread into larger objects. */
export const renderSettingsShape = {
  fps: fpsSchema.default(DEFAULT_RENDER_SETTINGS.fps),
  quality: z.enum(QUALITIES).default(DEFAULT_RENDER_SETTINGS.quality),
  format: z.enum(FORMATS).default(DEFAULT_RENDER_SETTINGS.format),
  resolution: z.enum(RESOLUTIONS).default(DEFAULT_RENDER_SETTINGS.resolution),
  /** Default: detected from the composition's data-width/data-height. */
  aspectRatio: z.enum(ASPECT_RATIOS).optional(),
};

/** The same fields on the wire (snake_case), for the /v3 API. */
export const renderOptionsShape = {
  fps: renderSettingsShape.fps,
  quality: renderSettingsShape.quality,
  format: renderSettingsShape.format,
  resolution: renderSettingsShape.resolution,
  /** Default: detected from the composition's data-width/data-height, else 16:9. */
  aspect_ratio: renderSettingsShape.aspectRatio,
};

/**
 * The cross-field rules, for any object that carries `format` and `resolution` (add it with
 * `.superRefine(renderSettingsRule)` to a schema that spreads one of the shapes above): 4k is mp4
 * only, and a GIF plays at most 50 fps (its frame delays are whole hundredths of a second, and
 * browsers slow anything shorter than 2 of them down).
 */
export function renderSettingsRule(
  settings: { format: OutputFormat; resolution: Resolution; fps?: number },
  ctx: z.RefinementCtx,
): void {
  if (settings.resolution === "4k" && ALPHA_FORMATS.includes(settings.format)) {
    ctx.addIssue({
      code: "custom",
      path: ["format"],
      message: `4k cannot be rendered as ${settings.format}: the 4k path has no alpha channel. Use mp4 for 4k, or 1080p for ${settings.format}.`,
    });
  } else if (settings.resolution === "4k" && settings.format === "gif") {
    ctx.addIssue({
      code: "custom",
      path: ["format"],
      message:
        "4k cannot be rendered as gif: a 4k GIF is far too large to play. Use mp4 for 4k, or 1080p for gif.",
    });
  }
  if (settings.format === "gif" && settings.fps !== undefined && settings.fps > GIF_MAX_FPS) {
    ctx.addIssue({
      code: "custom",
      path: ["fps"],
      message: `a gif plays at most ${GIF_MAX_FPS} fps, not ${settings.fps}: its frame delays are whole hundredths of a second. Use ${GIF_MAX_FPS} fps or fewer (15-30 keeps the file small).`,
    });
  }
}

export const renderSettingsSchema = z.object(renderSettingsShape).superRefine(renderSettingsRule);
export type RenderSettingFields = z.output<typeof renderSettingsSchema>;

export const renderOptionsSchema = z.object(renderOptionsShape).superRefine(renderSettingsRule);
export type RenderOptions = z.infer<typeof renderOptionsSchema>;

/** camelCase settings -> the wire's snake_case fields (aspect_ratio left out when undefined). */
export function toRenderOptions(settings: {
  fps: number;
  quality: Quality;
  format: OutputFormat;
  resolution: Resolution;
  aspectRatio?: AspectRatio | undefined;
}): RenderOptions {
  return {
    fps: settings.fps,
    quality: settings.quality,
    format: settings.format,
    resolution: settings.resolution,
    ...(settings.aspectRatio ? { aspect_ratio: settings.aspectRatio } : {}),
  };
}

/** The wire's snake_case fields -> camelCase settings. */
export function fromRenderOptions(options: RenderOptions): RenderSettingFields {
  return {
    fps: options.fps,
    quality: options.quality,
    format: options.format,
    resolution: options.resolution,
    ...(options.aspect_ratio ? { aspectRatio: options.aspect_ratio } : {}),
  };
}

export interface OptionProblem {
  /** The option at fault, e.g. "fps" or "format". */
  param: string;
  message: string;
}

/**
 * Validates the render settings of any camelCase object (extra fields are ignored, missing ones
 * take the defaults) and returns the first problem with its wire name (`aspect_ratio`), in a form
 * every caller can print.
 */
export function checkRenderOptions(
  input: unknown,
): { ok: true; options: RenderSettingFields } | { ok: false; problem: OptionProblem } {
  const result = renderSettingsSchema.safeParse(input);
  if (result.success) return { ok: true, options: result.data };
  const issue = result.error.issues[0]!;
  const param = issue.path.join(".") || "options";
  return {
    ok: false,
    problem: { param: param === "aspectRatio" ? "aspect_ratio" : param, message: issue.message },
  };
}
