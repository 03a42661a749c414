// Fonts as the reference renderer draws them. Compositions name fonts they never load (Helvetica,
// Arial, Inter, -apple-system, ...): each machine would draw them with whatever it has installed.
// The reference makes that deterministic and so do we, by its documented rules:
// - a font-family whose first family is generic (sans-serif, system-ui, -apple-system, monospace,
//   ...) gets "Inter" put in front of it;
// - a requested family that is one of its bundled families, or an alias of one (Helvetica -> Inter,
//   Menlo -> JetBrains Mono, Georgia -> EB Garamond, ...), and that the page declares no
//   @font-face for, gets the bundled faces under its own name (Latin, the same weights);
// - text is drawn with `text-rendering: geometricPrecision`.
// Applied when the document has parsed and again before each nested composition's scripts run, so
// scripts see the fonts they will be drawn with; the player and renders draw the same. The font
// data is inlined in the runtime (font-files.ts) and given to the page as FontFace objects made
// from bytes: nothing is fetched.
import { BUNDLED_FONT_FILES } from "./font-files";

const GENERIC_FAMILIES = new Set([
  "sans-serif",
  "serif",
  "monospace",
  "cursive",
  "fantasy",
  "system-ui",
  "ui-sans-serif",
  "ui-serif",
  "ui-monospace",
  "emoji",
  "math",
  "fangsong",
  "-apple-system",
  "blinkmacsystemfont",
]);

const PROMOTED_FAMILY = "Inter";

/** Lower-case family name -> bundled family slug (font-files.ts). */
const FONT_ALIASES: Record<string, string> = {
  inter: "inter",
  montserrat: "montserrat",
  outfit: "outfit",
  nunito: "nunito",
  oswald: "oswald",
  "league gothic": "league-gothic",
  "archivo black": "archivo-black",
  "space mono": "space-mono",
  "ibm plex mono": "ibm-plex-mono",
  "jetbrains mono": "jetbrains-mono",
  "eb garamond": "eb-garamond",
  "playfair display": "playfair-display",
  "source code pro": "source-code-pro",
  roboto: "roboto",
  "open sans": "open-sans",
  lato: "lato",
  poppins: "poppins",
  "helvetica neue": "inter",
  helvetica: "inter",
  arial: "inter",
  "helvetica bold": "inter",
  futura: "montserrat",
  "din alternate": "montserrat",
  "arial black": "montserrat",
  "bebas neue": "league-gothic",
  "courier new": "jetbrains-mono",
  courier: "jetbrains-mono",
  garamond: "eb-garamond",
  "segoe ui": "roboto",
  "sf pro": "inter",
  "sf pro display": "inter",
  "sf pro text": "inter",
  "sf pro rounded": "inter",
  avenir: "inter",
  "avenir next": "inter",
  "lucida grande": "inter",
  geneva: "inter",
  optima: "inter",
  verdana: "inter",
  tahoma: "inter",
  "trebuchet ms": "inter",
  calibri: "inter",
  candara: "inter",
  corbel: "inter",
  "lucida sans": "inter",
  "lucida sans unicode": "inter",
  "noto sans": "inter",
  "dejavu sans": "inter",
  "liberation sans": "inter",
  "sf mono": "jetbrains-mono",
  menlo: "jetbrains-mono",
  monaco: "jetbrains-mono",
  consolas: "jetbrains-mono",
  "lucida console": "jetbrains-mono",
  "lucida sans typewriter": "jetbrains-mono",
  "andale mono": "jetbrains-mono",
  "dejavu sans mono": "jetbrains-mono",
  "liberation mono": "jetbrains-mono",
  georgia: "eb-garamond",
  palatino: "eb-garamond",
  "palatino linotype": "eb-garamond",
  "book antiqua": "eb-garamond",
  cambria: "eb-garamond",
  times: "eb-garamond",
  "times new roman": "eb-garamond",
  "dejavu serif": "eb-garamond",
  "liberation serif": "eb-garamond",
};

/** The families of a font-family value in order, unquoted; `var(...)` stays one entry. */
export function parseFamilies(value: string): string[] {
  const families: string[] = [];
  let start = 0;
  let depth = 0;
  let quote = "";
  for (let index = 0; index < value.length; index++) {
    const char = value[index]!;
    if (quote) {
      if (char === "\\") index++;
      else if (char === quote) quote = "";
    } else if (char === '"' || char === "'") quote = char;
    else if (char === "(") depth++;
    else if (char === ")") depth = Math.max(0, depth - 1);
    else if (char === "," && depth === 0) {
      families.push(value.slice(start, index));
      start = index + 1;
    }
  }
  families.push(value.slice(start));
  return families
    .map((family) =>
      family
        .trim()
        .replace(/^['"]|['"]$/g, "")
        .trim(),
    )
    .filter((family) => family.length > 0);
}

/** `var(--name, fallback)rest` at the start of a value, as the reference reads it. */
function primaryVariable(
  value: string,
): { name: string; fallback: string | null; rest: string } | undefined {
  const trimmed = value.trim();
  if (!trimmed.toLowerCase().startsWith("var(")) return undefined;
  let depth = 0;
  for (let index = 0; index < trimmed.length; index++) {
    const char = trimmed[index];
    if (char === "(") depth++;
    if (char !== ")" || --depth !== 0) continue;
    const inner = trimmed.slice(4, index).trim();
    const comma = inner.indexOf(",");
    const name = (comma === -1 ? inner : inner.slice(0, comma)).trim();
    if (!/^--[\w-]+$/.test(name)) return undefined;
    return {
      name,
      fallback: comma === -1 ? null : inner.slice(comma + 1),
      rest: trimmed.slice(index + 1),
    };
  }
  return undefined;
}

/** The value with Inter in front of a generic first family (inside an unset var()'s fallback too). */
function promoted(value: string, custom: Map<string, string>): string | undefined {
  const variable = primaryVariable(value);
  if (variable) {
    if (custom.get(variable.name) || variable.fallback === null) return undefined;
    const fallback = promoted(variable.fallback, custom);
    return fallback ? `var(${variable.name}, ${fallback})${variable.rest}` : undefined;
  }
  const first = parseFamilies(value)[0];
  if (first === undefined || !GENERIC_FAMILIES.has(first.toLowerCase())) return undefined;
  return `${PROMOTED_FAMILY}, ${value.trim()}`;
}

/** The families a font-family value asks for, a var() at its start resolved. */
function requestedFamilies(value: string, custom: Map<string, string>, depth = 0): string[] {
  const families = parseFamilies(value);
  const variable = depth < 8 ? primaryVariable(value) : undefined;
  if (!variable) return families;
  const source = custom.get(variable.name) || variable.fallback;
  if (source === null) return families;
  const primary = requestedFamilies(source, custom, depth + 1);
  return primary.length === 0 ? [] : [...primary, ...families.slice(1)];
}

function customPropertiesOf(blocks: CSSStyleDeclaration[]): Map<string, string> {
  const custom = new Map<string, string>();
  for (const style of blocks) {
    for (let index = 0; index < style.length; index++) {
      const name = style[index]!;
      if (name.startsWith("--")) custom.set(name, style.getPropertyValue(name));
    }
  }
  return custom;
}

/** Rewrites `property` of `style` when the rule says so; keeps its priority. */
function promote(style: CSSStyleDeclaration, property: string, custom: Map<string, string>): void {
  const value = style.getPropertyValue(property);
  const next = value ? promoted(value, custom) : undefined;
  if (next) style.setProperty(property, next, style.getPropertyPriority(property));
}

/**
 * One pass over the page's readable style sheets and inline styles: every style declaration block,
 * and the families the page declares an @font-face for.
 */
function readStyles(): { blocks: CSSStyleDeclaration[]; declared: Set<string> } {
  const blocks: CSSStyleDeclaration[] = [];
  const declared = new Set<string>();
  const walk = (rules: CSSRuleList) => {
    for (const rule of Array.from(rules)) {
      if (rule instanceof CSSStyleRule) blocks.push(rule.style);
      if (rule instanceof CSSFontFaceRule) {
        const family = parseFamilies(rule.style.getPropertyValue("font-family"))[0];
        if (family) declared.add(family.toLowerCase());
      } else if ("cssRules" in rule && !(rule instanceof CSSImportRule)) {
        walk((rule as CSSGroupingRule).cssRules);
      }
    }
  };
  for (const sheet of Array.from(document.styleSheets)) {
    try {
      walk(sheet.cssRules);
    } catch {
      // a cross-origin stylesheet (web fonts' CSS): not ours to read
    }
  }
  for (const element of Array.from(document.querySelectorAll<HTMLElement>("[style]"))) {
    blocks.push(element.style);
  }
  return { blocks, declared };
}

const fontData = new Map<string, ArrayBuffer>();

function faceData(slug: string, weight: string, base64: string): ArrayBuffer {
  const key = `${slug}:${weight}`;
  let data = fontData.get(key);
  if (!data) {
    data = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0)).buffer;
    fontData.set(key, data);
  }
  return data;
}

/** Families already given bundled faces (applyReferenceFonts runs again for each composition). */
const provided = new Set<string>();

/**
 * Whether a block's `font-family` was written as such, not given by the `font` shorthand. The
 * reference rewrites only `font-family` declarations (PostCSS, by name): a family given by the
 * shorthand is drawn as written (the catalog's typewriter and matrix-decode: `font: 900 64px/1
 * ui-monospace, ..., monospace`). The CSSOM fills the longhand either way; the shorthand also
 * sets `font-kerning` (to its initial value), which a block otherwise hardly ever names, so that
 * tells them apart (a `font-family` written after a `font` in the same block is taken for the
 * shorthand's: not promoted, where the reference would).
 */
function declaresFontFamily(style: CSSStyleDeclaration): boolean {
  return (
    style.getPropertyValue("font-family") !== "" && style.getPropertyValue("font-kerning") === ""
  );
}

/** Puts Inter before generic primaries and gives aliased families their bundled faces. */
export function applyReferenceFonts(): void {
  const { blocks, declared } = readStyles();
  const original = customPropertiesOf(blocks);
  for (const style of blocks) {
    for (let index = 0; index < style.length; index++) {
      const name = style[index]!;
      if (name.startsWith("--")) promote(style, name, original);
    }
    if (declaresFontFamily(style)) promote(style, "font-family", original);
  }
  const custom = customPropertiesOf(blocks);
  const requested = new Map<string, string>();
  for (const style of blocks) {
    const value = declaresFontFamily(style) ? style.getPropertyValue("font-family") : "";
    if (!value) continue;
    for (const name of requestedFamilies(value, custom)) {
      const key = name.toLowerCase();
      if (!requested.has(key)) requested.set(key, name);
    }
  }

  for (const [key, name] of requested) {
    const slug = FONT_ALIASES[key];
    const files = slug ? BUNDLED_FONT_FILES[slug] : undefined;
    if (!slug || !files || declared.has(key) || provided.has(key)) continue;
    provided.add(key);
    // Faces made from bytes are ready at once, as the reference's data: URL faces are: page
    // scripts that measure text (GSAP reading an element's size) see the final font.
    for (const [weight, base64] of Object.entries(files)) {
      const face = new FontFace(name, faceData(slug, weight, base64), {
        weight,
        style: "normal",
        display: "block",
      });
      document.fonts.add(face);
    }
  }
  if (!document.querySelector("style[data-svc-text-rendering]")) {
    const style = document.createElement("style");
    style.setAttribute("data-svc-text-rendering", "");
    style.textContent = "html,body,*{text-rendering:geometricPrecision}";
    // First in the cascade: the page's own rules come later and win.
    (document.head ?? document.documentElement).prepend(style);
  }
}

/**
 * Gives `family` its bundled faces when it is one of the bundled families or an alias (the
 * captions layer asks for its font this way: its CSS lives in a shadow root the scan above does
 * not read). Resolves when the faces can draw; at once when there are none to give.
 */
export function provideBundledFamily(family: string): Promise<unknown> {
  const key = family.toLowerCase();
  const slug = FONT_ALIASES[key];
  const files = slug ? BUNDLED_FONT_FILES[slug] : undefined;
  if (!slug || !files || provided.has(key)) return document.fonts.ready;
  provided.add(key);
  const faces = Object.entries(files).map(([weight, base64]) => {
    const face = new FontFace(family, faceData(slug, weight, base64), { weight, style: "normal" });
    document.fonts.add(face);
    return face.load();
  });
  return Promise.all(faces);
}

/** Font files given as variable values (the brand kit's), by data: URL -> the family made of it. */
const fileFamilies = new Map<string, string>();

/**
 * The family a font file given as a variable's value (a `data:font/...` URL, src/shared/brand.ts)
 * is drawn under: its bytes become one face covering every weight and style, so the file is drawn
 * as it is (no synthetic bold) wherever the composition uses the variable. The family name is the
 * runtime's own, so it can never collide with one the page declares.
 */
export function familyForFontFile(dataUrl: string): string | undefined {
  const known = fileFamilies.get(dataUrl);
  if (known) return known;
  const comma = dataUrl.indexOf(",");
  if (comma < 0 || !dataUrl.slice(0, comma).endsWith(";base64")) return undefined;
  let bytes: ArrayBuffer;
  try {
    bytes = Uint8Array.from(atob(dataUrl.slice(comma + 1)), (char) => char.charCodeAt(0)).buffer;
  } catch {
    return undefined;
  }
  const family = `svc-font-file-${fileFamilies.size + 1}`;
  const face = new FontFace(family, bytes, { weight: "1 1000", style: "normal", display: "block" });
  document.fonts.add(face);
  fileFamilies.set(dataUrl, family);
  return family;
}
