// Render options: one zod schema used by the CLI, the desktop form, the engine and the service,
// so a rule such as "4k cannot be webm or mov" is written exactly once.
import { z } from "zod";
import { DEFAULT_FPS, FPS_MAX, FPS_MIN } from "./limits";

export const FORMATS = ["mp4", "webm", "mov"] as const;
export const QUALITIES = ["draft", "standard", "high"] as const;
export const RESOLUTIONS = ["1080p", "4k"] as const;
export const ASPECT_RATIOS = ["16:9", "9:16", "1:1"] as const;

export type OutputFormat = (typeof FORMATS)[number];
export type Quality = (typeof QUALITIES)[number];
export type Resolution = (typeof RESOLUTIONS)[number];
export type AspectRatio = (typeof ASPECT_RATIOS)[number];

/** Formats that carry an alpha channel (captured with a transparent page background). */
export const ALPHA_FORMATS: readonly OutputFormat[] = ["webm", "mov"];

export const FILE_EXTENSIONS: Record<OutputFormat, string> = {
  mp4: "mp4",
  webm: "webm",
  mov: "mov",
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

export const renderOptionsSchema = z
  .object({
    fps: fpsSchema.default(DEFAULT_FPS),
    quality: z.enum(QUALITIES).default("standard"),
    format: z.enum(FORMATS).default("mp4"),
    resolution: z.enum(RESOLUTIONS).default("1080p"),
    aspect_ratio: z.enum(ASPECT_RATIOS).optional(),
  })
  .superRefine((options, ctx) => {
    if (options.resolution === "4k" && ALPHA_FORMATS.includes(options.format)) {
      ctx.addIssue({
        code: "custom",
        path: ["format"],
        message: `4k cannot be rendered as ${options.format}: the 4k path has no alpha channel. Use mp4 for 4k, or 1080p for ${options.format}.`,
      });
    }
  });

export type RenderOptions = z.infer<typeof renderOptionsSchema>;

export interface OptionProblem {
  /** The option at fault, e.g. "fps" or "format". */
  param: string;
  message: string;
}

/** Validates render options and returns the first problem in a form every caller can print. */
export function checkRenderOptions(
  input: unknown,
): { ok: true; options: RenderOptions } | { ok: false; problem: OptionProblem } {
  const result = renderOptionsSchema.safeParse(input);
  if (result.success) return { ok: true, options: result.data };
  const issue = result.error.issues[0]!;
  return {
    ok: false,
    problem: { param: issue.path.join(".") || "options", message: issue.message },
  };
}
