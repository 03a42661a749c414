// Reads what svc needs from a composition's entry HTML without a browser: the root element's
// size, duration and fps hint, and the variables schema. Used before a render starts (engine),
// before an upload (client core) and by the desktop app, so all three agree on aspect ratio.
import type { AspectRatio } from "./render-options";
import type { VariableDefinition } from "./variables";

export interface CompositionScan {
  compositionId: string;
  width: number;
  height: number;
  /** Seconds, when the root declares data-duration (otherwise the timeline decides at render). */
  duration: number | undefined;
  fpsHint: number | undefined;
  /** Raw JSON of data-composition-variables on <html> or the root, if any. */
  variablesJson: string | null;
}

/** A project folder as the client sees it before a render: its entry file, size and variables. */
export interface ProjectScan {
  /** Absolute path of the project folder. */
  root: string;
  /** Entry file relative to the root, with forward slashes (as it is named in the zip). */
  composition: string;
  width: number;
  height: number;
  aspectRatio: AspectRatio;
  /** Seconds, when the root declares data-duration. */
  duration: number | undefined;
  variables: VariableDefinition[];
  /** Problems in data-composition-variables (the render still uses the valid entries). */
  schemaErrors: string[];
}

export type ScanResult =
  { ok: true; scan: CompositionScan } | { ok: false; message: string; hint: string };

/** Start tags with their attributes; quoted values may hold '>' (JSON in attributes does). */
const TAG = /<([a-zA-Z][\w-]*)((?:\s+[^\s=/>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*\/?>/g;
const ATTRIBUTE = /([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?/g;

function decodeEntities(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&amp;/g, "&");
}

function parseAttributes(source: string): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const match of source.matchAll(ATTRIBUTE)) {
    const name = match[1]!.toLowerCase();
    if (!attributes.has(name))
      attributes.set(name, decodeEntities(match[2] ?? match[3] ?? match[4] ?? ""));
  }
  return attributes;
}

function positiveNumber(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const number = Number(value);
  return Number.isFinite(number) && number > 0 ? number : undefined;
}

function noSize(): ScanResult {
  return {
    ok: false,
    message: "The composition root has no valid data-width and data-height.",
    hint: 'Add data-width="1920" data-height="1080" (pixels) to the element with data-composition-id.',
  };
}

export function scanCompositionHtml(html: string): ScanResult {
  // Markup inside <template> belongs to sub-compositions, and comments/scripts are not markup.
  const visible = html
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<(script|style|template)\b[\s\S]*?<\/\1\s*>/gi, "");
  let htmlVariables: string | null = null;
  // The root is the first element with data-composition-id that gives a size, as the reference
  // takes it: pages may mark <html> too (the catalog's focus-rack demo), without a size.
  let unsized = false;
  for (const match of visible.matchAll(TAG)) {
    const tag = match[1]!.toLowerCase();
    const attributes = parseAttributes(match[2] ?? "");
    if (tag === "html") htmlVariables = attributes.get("data-composition-variables") ?? null;
    if (!attributes.has("data-composition-id")) continue;
    if (!attributes.has("data-width") || !attributes.has("data-height")) {
      unsized = true;
      continue;
    }
    const width = positiveNumber(attributes.get("data-width"));
    const height = positiveNumber(attributes.get("data-height"));
    if (!width || !height) return noSize();
    return {
      ok: true,
      scan: {
        compositionId: attributes.get("data-composition-id") ?? "",
        width,
        height,
        duration: positiveNumber(attributes.get("data-duration")),
        fpsHint: positiveNumber(attributes.get("data-fps")),
        variablesJson: attributes.get("data-composition-variables") ?? htmlVariables,
      },
    };
  }
  if (unsized) return noSize();
  return {
    ok: false,
    message: "No composition root found: no element has a data-composition-id attribute.",
    hint: 'Wrap the composition in <div data-composition-id="main" data-width="1920" data-height="1080" data-duration="5">.',
  };
}

const ASPECTS: Array<[AspectRatio, number]> = [
  ["16:9", 16 / 9],
  ["9:16", 9 / 16],
  ["1:1", 1],
];

/** Tolerance on width/height when matching a composition to an aspect ratio. */
export const ASPECT_TOLERANCE = 0.05;

/** The aspect ratio a width x height matches within +-0.05, if any. */
export function detectAspectRatio(width: number, height: number): AspectRatio | undefined {
  const ratio = width / height;
  return ASPECTS.find(([, value]) => Math.abs(ratio - value) <= ASPECT_TOLERANCE)?.[0];
}
