// Render stage 1, prepare: check the options and the project before any browser starts. Reads the
// entry file's root attributes (size, variables schema), settles the aspect ratio and output size,
// and validates the variables, so a bad render fails in milliseconds with a hint. Both a whole
// render (render.ts) and one chunk of a distributed render (chunks.ts) start here.
import { readFile, realpath, stat } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import {
  detectAspectRatio,
  scanCompositionHtml,
  type CompositionScan,
} from "../../shared/composition-scan";
import {
  ALPHA_FORMATS,
  checkRenderOptions,
  outputSize,
  type AspectRatio,
  type RenderSettingFields,
} from "../../shared/render-options";
import {
  formatVariableIssue,
  parseVariablesSchema,
  validateVariables,
  type VariableValues,
} from "../../shared/variables";
import type { FrameImageFormat } from "../ffmpeg/encode";
import { EngineError } from "../errors";
import { resolveInsideRoot } from "../../node/index";
import type { PageCaptions } from "../../shared/captions";
import type { RenderCaptions, RenderCompositionOptions } from "../types";

/**
 * JPEG quality of captured frames per tier; x264 re-encodes them, so near-lossless is enough.
 * draft keeps 92 too: at 80 the JPEG's block noise cost x264 more bits than it saved the browser
 * time, and cost the draft ~0.003 SSIM.
 */
const JPEG_QUALITY = { draft: 92, standard: 92, high: 100 } as const;

/**
 * Share of the output size a frame is drawn at, per tier. A draft is a preview: the page is drawn
 * at 3/4 of the output size (1440x810 for 1080p, 56% of the pixels) and FFmpeg scales it up, as
 * a video editor's draft quality does. Chromium's software raster, compositing, read-back and
 * JPEG encoding all cost by the pixel, so a draft frame takes ~40% less CPU; layout and timing
 * do not change, only sharpness (SSIM ~0.99 against the full-size frame on the examples).
 */
const CAPTURE_SCALE = { draft: 0.75, standard: 1, high: 1 } as const;

/** Everything the later stages need, checked: settings, the project's paths and the frame shape. */
export interface PreparedRender {
  settings: RenderSettingFields;
  /** The project folder (real path) and the entry file inside it. */
  root: string;
  entryPath: string;
  urlPath: string;
  scan: CompositionScan;
  variables: VariableValues;
  /** Output frame size in pixels. */
  size: { width: number; height: number };
  /** The output's aspect ratio, and the page's size in CSS pixels at it (runtime/aspect.ts). */
  aspectRatio: AspectRatio;
  viewport: { width: number; height: number };
  /** Output pixels per CSS pixel the page is drawn at (smaller for a draft). */
  deviceScaleFactor: number;
  transparent: boolean;
  imageFormat: FrameImageFormat;
  jpegQuality: number;
  /** What the page's captions layer draws (runtime/captions.ts), when captions are burned in. */
  captions: PageCaptions | undefined;
  /** Warnings found so far; later stages add theirs. */
  warnings: string[];
}

export async function prepareRender(
  options: Omit<RenderCompositionOptions, "output">,
): Promise<PreparedRender> {
  const checked = checkRenderOptions(options);
  if (!checked.ok) {
    throw new EngineError(
      "invalid_options",
      `Invalid ${checked.problem.param}: ${checked.problem.message}`,
      hintForOption(checked.problem.param),
      undefined,
      { option: checked.problem.param },
    );
  }
  const settings = checked.options;
  const warnings: string[] = [];

  const { root, entryPath, urlPath } = await resolveComposition(
    options.projectDir,
    options.composition ?? "index.html",
  );
  const scanned = scanCompositionHtml(await readFile(entryPath, "utf8"));
  if (!scanned.ok) throw new EngineError("composition_not_found", scanned.message, scanned.hint);
  const scan = scanned.scan;

  const detected = detectAspectRatio(scan.width, scan.height);
  const aspectRatio: AspectRatio | undefined = options.aspectRatio ?? detected;
  const adapting = options.adaptAspectRatio === true && options.aspectRatio !== undefined;
  if (!aspectRatio || (options.aspectRatio && detected !== options.aspectRatio && !adapting)) {
    throw new EngineError(
      "aspect_mismatch",
      options.aspectRatio
        ? `The composition is ${scan.width}x${scan.height}, which is not ${options.aspectRatio}.`
        : `The composition is ${scan.width}x${scan.height}, which matches none of 16:9, 9:16 or 1:1.`,
      options.aspectRatio
        ? `Let the aspect ratio be detected from the composition${detected ? ` (${detected})` : ""}, or change data-width/data-height.`
        : "Set data-width/data-height to 1920x1080, 1080x1920 or 1080x1080.",
      undefined,
      {
        ...(options.aspectRatio ? { requested: options.aspectRatio } : {}),
        ...(detected ? { detected } : {}),
      },
    );
  }

  const schema = parseVariablesSchema(scan.variablesJson);
  for (const error of schema.errors) warnings.push(`variables schema: ${error}`);
  const variables = options.variables ?? {};
  const issues = validateVariables(schema.variables, variables);
  if (issues.length > 0) {
    if (options.strictVariables) {
      throw new EngineError(
        "invalid_variables",
        `The variables do not match the composition's schema: ${issues.map(formatVariableIssue).join("; ")}`,
        "Fix the values, or turn strict variables off to render with warnings.",
        issues,
      );
    }
    for (const issue of issues) warnings.push(`variable ${formatVariableIssue(issue)}`);
  }

  const size = outputSize(aspectRatio, settings.resolution);
  const viewport =
    detected === aspectRatio
      ? { width: scan.width, height: scan.height }
      : adaptedViewport(aspectRatio, scan);
  const transparent = ALPHA_FORMATS.includes(settings.format);
  return {
    settings,
    root,
    entryPath,
    urlPath,
    scan,
    variables,
    size,
    aspectRatio,
    viewport,
    deviceScaleFactor: (size.width / viewport.width) * CAPTURE_SCALE[settings.quality],
    transparent,
    imageFormat: transparent ? "png" : "jpeg",
    jpegQuality: JPEG_QUALITY[settings.quality],
    captions: pageCaptions(options.captions),
    warnings,
  };
}

/**
 * The page's size at another aspect ratio than the authored one: the authored short side kept
 * (a 1920x1080 composition is laid out at 1080x1920 for 9:16 and 1080x1080 for 1:1), so text and
 * pictures keep their CSS pixel sizes.
 */
export function adaptedViewport(
  aspectRatio: AspectRatio,
  authored: { width: number; height: number },
): { width: number; height: number } {
  const short = Math.min(authored.width, authored.height);
  const long = Math.round((short * 16) / 9);
  if (aspectRatio === "16:9") return { width: long, height: short };
  if (aspectRatio === "9:16") return { width: short, height: long };
  return { width: short, height: short };
}

export function resolveWorkers(workers: number | "auto" | undefined, segments: number): number {
  const wanted =
    workers === undefined ? 1 : workers === "auto" ? Math.min(4, availableParallelism()) : workers;
  if (!Number.isInteger(wanted) || wanted < 1) {
    throw new EngineError(
      "invalid_options",
      `workers must be a whole number of at least 1 or "auto", not ${String(workers)}.`,
      'Use 2 workers, or "auto".',
      undefined,
      { option: "workers" },
    );
  }
  return Math.max(1, Math.min(wanted, segments));
}

export async function resolveComposition(
  projectDir: string,
  composition: string,
): Promise<{ root: string; entryPath: string; urlPath: string }> {
  const root = resolve(projectDir);
  const rootInfo = await stat(root).catch(() => undefined);
  if (!rootInfo?.isDirectory()) {
    throw new EngineError(
      "composition_not_found",
      `The project folder ${projectDir} does not exist.`,
      "Pass the folder that holds index.html.",
    );
  }
  const realRoot = await realpath(root);
  const urlPath = "/" + composition.replace(/\\/g, "/").replace(/^\/+/, "");
  const entryPath = await resolveInsideRoot(realRoot, urlPath);
  const entryInfo = entryPath ? await stat(entryPath).catch(() => undefined) : undefined;
  if (!entryPath || !entryInfo?.isFile()) {
    throw new EngineError(
      "composition_not_found",
      `The entry file ${composition} was not found in ${projectDir}.`,
      composition === "index.html"
        ? "Add an index.html to the project folder, or name another entry file."
        : "The composition is a path relative to the project folder, and must stay inside it.",
      undefined,
      { composition },
    );
  }
  return { root: realRoot, entryPath, urlPath };
}

function hintForOption(param: string): string {
  if (param === "fps")
    return "Use a whole number of frames per second from 1 to 240 (at most 50 for gif), e.g. 30.";
  if (param === "format") return "Render 4k as mp4, or use 1080p for the other formats.";
  return `Check the value of ${param}.`;
}

/** The part of a render's captions the page draws: none when they are not burned in. */
function pageCaptions(captions: RenderCaptions | undefined): PageCaptions | undefined {
  if (!captions || captions.burnIn === false) return undefined;
  return {
    cues: captions.cues,
    style: captions.style,
    ...(captions.look ? { look: captions.look } : {}),
  };
}
