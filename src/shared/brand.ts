// The brand kit (SPEC.md section 10): a logo, named colours and fonts that fill every composition
// that opts in by naming its variables by the convention below (docs/composition-format.md,
// "Brand kit"). One implementation for the app's Settings -> Brand, the brand file it exports and
// `svc render --brand FILE`. The logo travels as a data: URL so a kit is one self-contained value:
// the page shows it without a file of the kit having to be copied into the project, and the render
// service receives it inside the variables like any other value. A font is a family name or, for a
// font file the creator chose, the file itself as a data: URL that also carries its file name
// (`data:font/woff2;name=Brand%20Sans.woff2;base64,...`): the page runtime gives the bytes to the
// page as a font face (src/engine/runtime/variables.ts), so preview and render draw the file on
// any machine without the file being installed or copied into the project.
import { z } from "zod";
import type { VariableDefinition, VariableValues } from "./variables";

/** The colours a kit names, in the order the app lists them. */
export const BRAND_COLORS = ["primary", "secondary", "accent", "background", "text"] as const;
export type BrandColor = (typeof BRAND_COLORS)[number];

export const BRAND_COLOR_LABELS: Record<BrandColor, string> = {
  primary: "Main colour",
  secondary: "Second colour",
  accent: "Accent colour",
  background: "Background colour",
  text: "Text colour",
};

/** The variable id each part of the kit fills, and the variable type it must have. */
export const BRAND_VARIABLES = {
  logo: { id: "brand-logo", type: "image" },
  primary: { id: "brand-primary", type: "color" },
  secondary: { id: "brand-secondary", type: "color" },
  accent: { id: "brand-accent", type: "color" },
  background: { id: "brand-background", type: "color" },
  text: { id: "brand-text", type: "color" },
  headingFont: { id: "brand-font", type: "font" },
  bodyFont: { id: "brand-body-font", type: "font" },
} as const;

/** A logo of at most this many bytes (before base64): a kit is sent with every render. */
export const BRAND_LOGO_MAX_BYTES = 512 * 1024;

/** A font file of at most this many bytes: it travels with every render and preview, as the logo. */
export const BRAND_FONT_MAX_BYTES = 384 * 1024;

/** The font files a kit takes, by extension, and the media type their data: URL carries. */
export const BRAND_FONT_TYPES: Record<string, string> = {
  ttf: "font/ttf",
  otf: "font/otf",
  woff: "font/woff",
  woff2: "font/woff2",
};

/** `data:font/<type>[;name=<file name, URL-encoded>];base64,<bytes>` */
export const FONT_DATA_URL =
  /^data:font\/(ttf|otf|woff|woff2)(?:;name=([A-Za-z0-9%._~!$&'()*+-]{1,200}))?;base64,[A-Za-z0-9+/]+=*$/;

/** True when a font value is a font file (a data: URL) rather than a family name. */
export function isFontFile(value: string): boolean {
  return value.startsWith("data:font/");
}

/** A font file's data: URL, naming the file it came from. */
export function fontDataUrl(fileName: string, base64: string): string | undefined {
  const extension = /\.([a-z0-9]+)$/i.exec(fileName)?.[1]?.toLowerCase() ?? "";
  const type = BRAND_FONT_TYPES[extension];
  if (!type) return undefined;
  // encodeURIComponent leaves ' ( ) * ! ~ as they are; all are allowed in the name parameter.
  return `data:${type};name=${encodeURIComponent(fileName)};base64,${base64}`;
}

/** The file name a font file's data: URL carries ("Font file" when it names none). */
export function fontFileName(value: string): string {
  const name = /^data:font\/[a-z0-9]+;name=([^;,]*)/.exec(value)?.[1];
  if (!name) return "Font file";
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

const LOGO_DATA_URL = /^data:image\/(png|jpeg|webp|gif|svg\+xml);base64,[A-Za-z0-9+/]+=*$/;
const HEX_COLOR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;
/** A family name as CSS takes it unquoted in a custom property: letters, digits, spaces, - and _. */
const FAMILY = /^[A-Za-z0-9][A-Za-z0-9 _-]{0,63}$/;

/** A family name, or a font file as a data: URL of at most BRAND_FONT_MAX_BYTES. */
const fontSchema = z.union(
  [
    z.string().regex(FAMILY),
    z
      .string()
      .max(Math.ceil((BRAND_FONT_MAX_BYTES * 4) / 3) + 300)
      .regex(FONT_DATA_URL),
  ],
  {
    error: `a font is a family name, or a TTF, OTF, WOFF or WOFF2 file of at most ${BRAND_FONT_MAX_BYTES / 1024} KB`,
  },
);

export const brandKitSchema = z
  .object({
    /** A data: URL of a PNG, JPEG, WebP, GIF or SVG image. */
    logo: z
      .string()
      .max(Math.ceil((BRAND_LOGO_MAX_BYTES * 4) / 3) + 64, {
        error: `the logo must be at most ${BRAND_LOGO_MAX_BYTES / 1024} KB`,
      })
      .regex(LOGO_DATA_URL, { error: "the logo must be a PNG, JPEG, WebP, GIF or SVG picture" })
      .optional(),
    colors: z
      .partialRecord(
        z.enum(BRAND_COLORS),
        z.string().regex(HEX_COLOR, { error: "a colour is written #rrggbb" }),
      )
      .default({}),
    fonts: z
      .object({
        heading: fontSchema.optional(),
        body: fontSchema.optional(),
      })
      .strict()
      .default({}),
  })
  .strict();

export type BrandKit = z.output<typeof brandKitSchema>;

export const EMPTY_BRAND_KIT: BrandKit = { colors: {}, fonts: {} };

/** The brand file the app exports and `svc render --brand` reads: the kit with a format mark. */
export const BRAND_FILE_FORMAT = "svc-brand-kit/1";

export function isEmptyBrandKit(kit: BrandKit): boolean {
  return (
    kit.logo === undefined &&
    Object.keys(kit.colors).length === 0 &&
    kit.fonts.heading === undefined &&
    kit.fonts.body === undefined
  );
}

/**
 * The values the kit gives a composition: one per brand variable it declares with the expected
 * type and the kit has a value for. Callers put the project's own values on top, so a value the
 * creator set for this project wins.
 */
export function brandValues(kit: BrandKit, schema: readonly VariableDefinition[]): VariableValues {
  const declared = new Map(schema.map((definition) => [definition.id, definition.type]));
  const fromKit: Record<keyof typeof BRAND_VARIABLES, string | undefined> = {
    logo: kit.logo,
    primary: kit.colors.primary,
    secondary: kit.colors.secondary,
    accent: kit.colors.accent,
    background: kit.colors.background,
    text: kit.colors.text,
    headingFont: kit.fonts.heading,
    bodyFont: kit.fonts.body,
  };
  const values: VariableValues = {};
  for (const [part, { id, type }] of Object.entries(BRAND_VARIABLES)) {
    const value = fromKit[part as keyof typeof BRAND_VARIABLES];
    if (value !== undefined && declared.get(id) === type) values[id] = value;
  }
  return values;
}

/** True when the composition declares at least one brand variable. */
export function usesBrand(schema: readonly VariableDefinition[]): boolean {
  const ids = new Set<string>(Object.values(BRAND_VARIABLES).map((entry) => entry.id));
  return schema.some((definition) => ids.has(definition.id));
}
