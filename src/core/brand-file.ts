// The brand file (src/shared/brand.ts): what Settings -> Brand exports and `svc render --brand FILE`
// reads. JSON `{format, logo, colors, fonts}`; the logo is a data: URL, or (written by hand) a
// picture's path relative to the brand file, read here into a data: URL. A font is a family name
// or a font file embedded as a data: URL (what the app saves), or (written by hand) a .ttf, .otf,
// .woff or .woff2 file's path relative to the brand file, read here into one.
import { readFile } from "node:fs/promises";
import { basename, dirname, extname, resolve } from "node:path";
import {
  BRAND_FILE_FORMAT,
  BRAND_FONT_MAX_BYTES,
  BRAND_FONT_TYPES,
  fontDataUrl,
  BRAND_LOGO_MAX_BYTES,
  brandKitSchema,
  brandValues,
  type BrandKit,
} from "../shared/brand";
import { scanCompositionHtml } from "../shared/composition-scan";
import { parseVariablesSchema, type VariableValues } from "../shared/variables";
import { usageError } from "./errors";

const LOGO_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".webp": "image/webp",
  ".gif": "image/gif",
  ".svg": "image/svg+xml",
};

/** A picture file as the data: URL a kit holds; a clear error for a wrong type or a big file. */
export async function logoDataUrl(file: string): Promise<string> {
  const type = LOGO_TYPES[extname(file).toLowerCase()];
  if (!type) {
    throw usageError(
      "brand_invalid",
      `The logo ${file} is not a PNG, JPEG, WebP, GIF or SVG picture.`,
      "Choose a picture file for the logo.",
      { file },
    );
  }
  const bytes = await readFile(file).catch(() => undefined);
  if (!bytes) {
    throw usageError(
      "brand_invalid",
      `Cannot read the logo ${file}.`,
      "Check that the file exists.",
      {
        file,
      },
    );
  }
  if (bytes.length > BRAND_LOGO_MAX_BYTES) {
    throw usageError(
      "brand_invalid",
      `The logo ${file} is ${Math.ceil(bytes.length / 1024)} KB; a logo may be at most ${BRAND_LOGO_MAX_BYTES / 1024} KB.`,
      "Use a smaller picture (an SVG, or a PNG of about 512 px).",
      { file },
    );
  }
  return `data:${type};base64,${bytes.toString("base64")}`;
}

/** A font file as the data: URL a kit holds; a clear error for a wrong type or a big file. */
export async function fontFileDataUrl(file: string): Promise<string> {
  if (!BRAND_FONT_TYPES[extname(file).slice(1).toLowerCase()]) {
    throw usageError(
      "brand_invalid",
      `The font ${file} is not a TTF, OTF, WOFF or WOFF2 font file.`,
      "Name a font file, or a font family such as Inter.",
      { file },
    );
  }
  const bytes = await readFile(file).catch(() => undefined);
  if (!bytes) {
    throw usageError("brand_invalid", `Cannot read the font ${file}.`, "Check that it exists.", {
      file,
    });
  }
  if (bytes.length > BRAND_FONT_MAX_BYTES) {
    throw usageError(
      "brand_invalid",
      `The font ${file} is ${Math.ceil(bytes.length / 1024)} KB; a font file may be at most ${BRAND_FONT_MAX_BYTES / 1024} KB.`,
      "Use the WOFF2 version of the font, or one with fewer languages (a Latin subset).",
      { file },
    );
  }
  return fontDataUrl(basename(file), bytes.toString("base64"))!;
}

/** A font entry written by hand as a file's path (it has a font file's extension). */
function isFontPath(value: unknown): value is string {
  return (
    typeof value === "string" &&
    !value.startsWith("data:") &&
    /\.(ttf|otf|woff2?)$/i.test(value.trim())
  );
}

/** Reads and checks a brand file. */
export async function readBrandFile(file: string): Promise<BrandKit> {
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) {
    throw usageError("brand_invalid", `Cannot read the brand file ${file}.`, "Check the path.", {
      file,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw usageError(
      "brand_invalid",
      `The brand file ${file} is not valid JSON: ${(error as Error).message}`,
      "Export the brand file again from the app's Settings -> Brand.",
      { file },
    );
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw usageError("brand_invalid", `The brand file ${file} is not a JSON object.`, undefined, {
      file,
    });
  }
  const { format, ...rest } = json as Record<string, unknown>;
  if (format !== undefined && format !== BRAND_FILE_FORMAT) {
    throw usageError(
      "brand_invalid",
      `The brand file ${file} has format ${JSON.stringify(format)}; this svc reads ${BRAND_FILE_FORMAT}.`,
      undefined,
      { file },
    );
  }
  if (typeof rest.logo === "string" && !rest.logo.startsWith("data:")) {
    rest.logo = await logoDataUrl(resolve(dirname(file), rest.logo));
  }
  if (typeof rest.fonts === "object" && rest.fonts !== null && !Array.isArray(rest.fonts)) {
    const fonts = { ...(rest.fonts as Record<string, unknown>) };
    for (const [role, value] of Object.entries(fonts)) {
      if (isFontPath(value)) fonts[role] = await fontFileDataUrl(resolve(dirname(file), value));
    }
    rest.fonts = fonts;
  }
  const parsed = brandKitSchema.safeParse(rest);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) =>
      issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message,
    );
    throw usageError(
      "brand_invalid",
      `The brand file ${file} is not a brand kit: ${problems.join("; ")}`,
      `It holds {"format": "${BRAND_FILE_FORMAT}", "logo", "colors": {"primary": "#rrggbb", ...}, "fonts": {"heading", "body"}}; a font is a family name or a font file.`,
      { file },
    );
  }
  return parsed.data;
}

/** The brand file's text for a kit. */
export function brandFileText(kit: BrandKit): string {
  return `${JSON.stringify({ format: BRAND_FILE_FORMAT, ...kit }, null, 2)}\n`;
}

/**
 * The variables of a render with a brand file: the kit's values for the brand variables the
 * composition declares, under the values given (`values` win, as a project's own values do in
 * the app). A composition that cannot be read gets none; the render reports it.
 */
export async function valuesWithBrand(
  brandFile: string,
  entryFile: string,
  values: VariableValues | undefined,
): Promise<VariableValues> {
  const kit = await readBrandFile(brandFile);
  const html = await readFile(entryFile, "utf8").catch(() => "");
  const scanned = scanCompositionHtml(html);
  const schema = scanned.ok ? parseVariablesSchema(scanned.scan.variablesJson).variables : [];
  return { ...brandValues(kit, schema), ...values };
}
