// Settings -> Brand: the brand kit (src/shared/brand.ts) a creator sets once — a logo, named colours
// and fonts — and every composition that opts in (ours all do) shows, unless the creator changed
// that value in a project. Saved with the app's settings; "Save brand file" writes the same kit as
// a file a developer passes to `svc render --brand` (said under "For developers" only). A font file
// is embedded in both (a data: URL with its file name), so the kit never points at a path.
import { useState } from "react";
import {
  BRAND_COLOR_LABELS,
  BRAND_COLORS,
  BRAND_FILE_FORMAT,
  BRAND_FONT_MAX_BYTES,
  BRAND_LOGO_MAX_BYTES,
  EMPTY_BRAND_KIT,
  brandKitSchema,
  fontDataUrl,
  fontFileName,
  isFontFile,
  type BrandKit,
} from "../../shared/brand";
import { useSettings, useUpdateSettings } from "../hooks/account";
import { ErrorNote } from "./ErrorNote";

/** The families every render and preview has (bundled from npm @fontsource). */
const BUNDLED_FAMILIES = [
  "Inter",
  "Montserrat",
  "Outfit",
  "Nunito",
  "Oswald",
  "League Gothic",
  "Archivo Black",
  "Poppins",
  "Roboto",
  "Open Sans",
  "Lato",
  "Playfair Display",
  "EB Garamond",
  "Space Mono",
  "JetBrains Mono",
];

function readAsDataUrl(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(new Error(`${file.name} could not be read.`));
    reader.readAsDataURL(file);
  });
}

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * One of the kit's fonts: a family typed or picked from the list, or a font file chosen with
 * "Choose font file…", whose bytes are kept in the kit (saved with the app's settings and in the
 * brand file), never a path to it.
 */
function BrandFontField({
  label,
  value,
  onChange,
  onProblem,
}: {
  label: string;
  value: string | undefined;
  onChange: (value: string | undefined) => void;
  onProblem: (problem: string | undefined) => void;
}) {
  const pickFile = async (file: File | undefined) => {
    if (!file) return;
    if (file.size > BRAND_FONT_MAX_BYTES) {
      onProblem(
        `${file.name} is ${Math.ceil(file.size / 1024)} KB; a font file may be at most ${BRAND_FONT_MAX_BYTES / 1024} KB. Use its WOFF2 version, or one made for fewer languages.`,
      );
      return;
    }
    const dataUrl = await readAsDataUrl(file);
    const font = fontDataUrl(file.name, dataUrl.slice(dataUrl.indexOf(",") + 1));
    if (!font || !brandKitSchema.safeParse({ fonts: { heading: font } }).success) {
      onProblem(`${file.name} is not a font file. Choose a TTF, OTF, WOFF or WOFF2 file.`);
      return;
    }
    onChange(font);
  };
  const file = value !== undefined && isFontFile(value);
  return (
    <div className="brand-font">
      <label>
        {label}
        {file ? (
          <output className="brand-font-file">{fontFileName(value)}</output>
        ) : (
          <input
            list="brand-font-families"
            value={value ?? ""}
            placeholder="Each video keeps its own"
            onChange={(event) => onChange(event.target.value || undefined)}
          />
        )}
      </label>
      <span className="row">
        <label className="file-button">
          Choose font file…
          <input
            type="file"
            accept=".ttf,.otf,.woff,.woff2,font/ttf,font/otf,font/woff,font/woff2"
            aria-label={`Font file for ${label}`}
            className="sr-only"
            onChange={(event) => {
              void pickFile(event.target.files?.[0]);
              event.target.value = "";
            }}
          />
        </label>
        {file ? (
          <button
            type="button"
            aria-label={`Remove ${label} file`}
            onClick={() => onChange(undefined)}
          >
            Remove
          </button>
        ) : null}
      </span>
    </div>
  );
}

export function BrandSettings() {
  const settings = useSettings();
  const update = useUpdateSettings();
  const [draft, setDraft] = useState<BrandKit | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const saved = settings.data?.brand ?? EMPTY_BRAND_KIT;
  const kit = draft ?? saved;
  const edit = (change: Partial<BrandKit>) => {
    setProblem(undefined);
    setDraft({ ...kit, ...change });
  };
  const pickLogo = async (file: File | undefined) => {
    if (!file) return;
    if (file.size > BRAND_LOGO_MAX_BYTES) {
      setProblem(
        `This picture is ${Math.ceil(file.size / 1024)} KB; a logo may be at most ${BRAND_LOGO_MAX_BYTES / 1024} KB. Use a smaller picture.`,
      );
      return;
    }
    const logo = await readAsDataUrl(file);
    const checked = brandKitSchema.safeParse({ ...kit, logo });
    if (!checked.success) {
      setProblem("The logo must be a PNG, JPEG, WebP, GIF or SVG picture.");
      return;
    }
    edit({ logo });
  };
  const loadFile = async (file: File | undefined) => {
    if (!file) return;
    try {
      const { format: _format, ...rest } = JSON.parse(await file.text()) as Record<string, unknown>;
      const checked = brandKitSchema.safeParse(rest);
      if (!checked.success) throw new Error();
      setDraft(checked.data);
      setProblem(undefined);
    } catch {
      setProblem(`${file.name} is not a brand file saved by svc.`);
    }
  };
  return (
    <form
      className="panel brand"
      aria-labelledby="brand-title"
      onSubmit={(event) => {
        event.preventDefault();
        update.mutate({ brand: kit }, { onSuccess: () => setDraft(undefined) });
      }}
    >
      <h3 id="brand-title">Brand</h3>
      <p className="muted">
        Your logo, colours and fonts, shown in every video made to use them (all the templates of
        "New video" are). A change you make in a video's own form stays in that video.
      </p>
      <div className="brand-logo">
        <span className="brand-logo-box">
          {kit.logo ? (
            <img src={kit.logo} alt="Your logo" />
          ) : (
            <span className="muted">No logo</span>
          )}
        </span>
        <label className="file-button">
          Choose logo…
          <input
            type="file"
            accept="image/png,image/jpeg,image/webp,image/gif,image/svg+xml"
            className="sr-only"
            onChange={(event) => void pickLogo(event.target.files?.[0])}
          />
        </label>
        {kit.logo ? (
          <button type="button" onClick={() => edit({ logo: undefined })}>
            Remove logo
          </button>
        ) : null}
      </div>
      <fieldset>
        <legend>Colours</legend>
        {BRAND_COLORS.map((name) => (
          <div className="brand-color" key={name}>
            <label className="inline">
              <input
                type="color"
                value={kit.colors[name] ?? "#000000"}
                onChange={(event) =>
                  edit({ colors: { ...kit.colors, [name]: event.target.value } })
                }
              />
              {BRAND_COLOR_LABELS[name]}
            </label>
            {kit.colors[name] ? (
              <button
                type="button"
                aria-label={`Clear ${BRAND_COLOR_LABELS[name]}`}
                onClick={() => {
                  const { [name]: _cleared, ...colors } = kit.colors;
                  edit({ colors });
                }}
              >
                Clear
              </button>
            ) : (
              <span className="muted">Not set: each video keeps its own</span>
            )}
          </div>
        ))}
      </fieldset>
      <fieldset>
        <legend>Fonts</legend>
        <datalist id="brand-font-families">
          {BUNDLED_FAMILIES.map((family) => (
            <option key={family} value={family} />
          ))}
        </datalist>
        <BrandFontField
          label="Heading font"
          value={kit.fonts.heading}
          onChange={(heading) => edit({ fonts: { ...kit.fonts, heading } })}
          onProblem={setProblem}
        />
        <BrandFontField
          label="Text font"
          value={kit.fonts.body}
          onChange={(body) => edit({ fonts: { ...kit.fonts, body } })}
          onProblem={setProblem}
        />
        <p className="muted">
          A font installed on this computer, one from the list, or a font file (TTF, OTF, WOFF or
          WOFF2): the file is kept with your brand, so your videos show it on any computer.
        </p>
      </fieldset>
      {problem ? <p className="issue">{problem}</p> : null}
      {update.error ? <ErrorNote error={update.error} /> : null}
      <div className="row">
        <button type="submit" className="primary" disabled={!draft || update.isPending}>
          {update.isPending ? "Saving…" : "Save brand"}
        </button>
        <button type="button" onClick={() => setDraft(EMPTY_BRAND_KIT)}>
          Clear all
        </button>
        <button
          type="button"
          onClick={() =>
            download(
              "brand-kit.json",
              `${JSON.stringify({ format: BRAND_FILE_FORMAT, ...kit }, null, 2)}\n`,
            )
          }
        >
          Save brand file…
        </button>
        <label className="file-button">
          Load brand file…
          <input
            type="file"
            accept="application/json,.json"
            className="sr-only"
            onChange={(event) => void loadFile(event.target.files?.[0])}
          />
        </label>
      </div>
    </form>
  );
}
